// Records of an agent seen outside the chain being verified: proof bundles or /v1/ledger pages
// (`ledger verify --seen`), and, when the chain is read from a service, the newest record that
// service's own /v1/ledger lists. A chain that verifies on its own can still have been cut back
// (its head moved back hides the records after it); every record seen elsewhere must be in it,
// unchanged. The feed is read BEFORE the chain, so a record it lists existed when the chain was
// read: appends alone can never make this check fail.
import { readFile } from 'node:fs/promises';
import { UnusableInput } from './documents.ts';
import { isObject, nestedDeeperThan } from '../core/json.ts';
import { MAX_JSON_NESTING } from './bounds.ts';

export type SeenRecord = { agent: string; seq: number; chainHash: string; from: string };


/** A published record (`{entry, chain_hash, ...}`) as a sighting; null when it is not one. */
function sighting(record: unknown, from: string): SeenRecord | null {
  if (!isObject(record) || !isObject(record.entry) || typeof record.chain_hash !== 'string') return null;
  const { agent, seq } = record.entry;
  if (typeof agent !== 'string' || typeof seq !== 'string' || !/^[1-9][0-9]{0,15}$/.test(seq)) return null;
  return { agent, seq: Number(seq), chainHash: record.chain_hash, from };
}

/** The records a proof bundle, a /v1/ledger page or a chain page shows. */
export function sightingsIn(document: unknown, origin: string): SeenRecord[] {
  if (isObject(document) && document.object === 'proof') {
    const one = sighting(document.record, `proof bundle ${origin}`);
    if (one) return [one];
  }
  if (isObject(document) && document.object === 'list' && Array.isArray(document.data)) {
    return document.data.map((r) => sighting(r, `/v1/ledger page ${origin}`)).filter((s): s is SeenRecord => s !== null);
  }
  if (isObject(document) && document.object === 'chain' && Array.isArray(document.records)) {
    return document.records.map((r) => sighting(r, `chain page ${origin}`)).filter((s): s is SeenRecord => s !== null);
  }
  throw new UnusableInput(`--seen ${origin} is not a proof bundle, a /v1/ledger page or a chain page`);
}

/** Reads one --seen source: a file or a URL of a proof bundle or a /v1/ledger (or chain) page. */
export async function readSeen(source: string, fetcher: typeof fetch): Promise<SeenRecord[]> {
  let text: string;
  try {
    if (/^https?:\/\//i.test(source)) {
      const res = await fetcher(source, { headers: { accept: 'application/json' } });
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      text = await res.text();
    } else {
      text = await readFile(source, 'utf8');
    }
  } catch (e) {
    throw new UnusableInput(`cannot read --seen ${source}: ${(e as Error).message}`);
  }
  if (nestedDeeperThan(text, MAX_JSON_NESTING)) throw new UnusableInput(`--seen ${source} nests JSON deeper than ${MAX_JSON_NESTING} levels`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new UnusableInput(`--seen ${source} is not JSON`);
  }
  return sightingsIn(document, source);
}

/**
 * The base URL (`…/v1`) and agent of an export or chain URL, whose service's /v1/ledger can be
 * asked for the agent's newest record; null for anything else.
 */
export function feedOf(source: string): { base: string; agent: string } | null {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(url.protocol)) return null;
  const exported = /^(.*)\/export$/.exec(url.pathname);
  if (exported && url.searchParams.get('agent')) return { base: `${url.origin}${exported[1]}`, agent: url.searchParams.get('agent')! };
  const chain = /^(.*)\/agents\/([^/]+)\/chain$/.exec(url.pathname);
  if (chain) return { base: `${url.origin}${chain[1]}`, agent: decodeURIComponent(chain[2]!) };
  return null;
}

/** The agent's newest record on the service's /v1/ledger, or why it could not be read. */
export async function newestOnFeed(feed: { base: string; agent: string }, fetcher: typeof fetch): Promise<SeenRecord[] | string> {
  const url = `${feed.base}/ledger?agent=${encodeURIComponent(feed.agent)}&include_demo=true&limit=1`;
  try {
    const res = await fetcher(url, { headers: { accept: 'application/json' } });
    if (res.status !== 200) return `${url} answered ${res.status}`;
    return sightingsIn(await res.json(), url).map((s) => ({ ...s, from: 'the service\'s /v1/ledger' }));
  } catch (e) {
    return `${url}: ${(e as Error).message}`;
  }
}
