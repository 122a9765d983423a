// Bitcoin block headers from an Esplora-style HTTP API (`GET /block-height/<h>` gives the block hash
// as text, `GET /block/<hash>/header` the header as hex). It is responsible for fetching a header
// by height and checking that it hashes to the hash it was fetched by, so the source cannot swap in
// another header for that hash. Trusting the source's height -> hash answer remains ("lite-client
// verification").

import { boundedFetch, trimBase, type HttpFailure, type HttpOptions } from '../runtime/bounded-http.ts';
import { parseHex, type Result } from '../method/ots/codec.ts';
import { blockHash, HEADER_LENGTH, type HeaderLookup } from '../method/ots/verify.ts';

export type HeaderSourceError =
  | { kind: HttpFailure['kind']; message: string }
  | { kind: 'http_status'; status: number; message: string }
  | { kind: 'malformed'; message: string }
  | { kind: 'hash_mismatch'; message: string; expected: string; actual: string };

export type BlockAtHeight = { height: number; hash: string; header: Uint8Array };

const BLOCK_HASH = /^[0-9a-f]{64}$/;

export function esploraHeaderSource(baseUrl: string, options: HttpOptions = {}) {
  const base = trimBase(baseUrl);
  const get = async (path: string): Promise<Result<string, HeaderSourceError>> => {
    const answer = await boundedFetch(`${base}${path}`, { method: 'GET', headers: { Accept: 'text/plain' } }, { maxBytes: 1_000, ...options });
    if (!answer.ok) return answer;
    const text = new TextDecoder().decode(answer.value.body).trim();
    if (answer.value.status !== 200) return { ok: false, error: { kind: 'http_status', status: answer.value.status, message: text.slice(0, 160) } };
    return { ok: true, value: text };
  };

  async function blockHashAt(height: number): Promise<Result<string, HeaderSourceError>> {
    if (!Number.isSafeInteger(height) || height < 0) return { ok: false, error: { kind: 'malformed', message: `not a block height: ${height}` } };
    const text = await get(`/block-height/${height}`);
    if (!text.ok) return text;
    if (!BLOCK_HASH.test(text.value)) return { ok: false, error: { kind: 'malformed', message: 'block-height did not answer a 64-hex block hash' } };
    return text;
  }

  async function headerByHash(hash: string): Promise<Result<Uint8Array, HeaderSourceError>> {
    if (!BLOCK_HASH.test(hash)) return { ok: false, error: { kind: 'malformed', message: `not a block hash: ${hash.slice(0, 80)}` } };
    const text = await get(`/block/${hash}/header`);
    if (!text.ok) return text;
    const header = parseHex(text.value);
    if (!header || header.length !== HEADER_LENGTH) return { ok: false, error: { kind: 'malformed', message: 'header is not 80 bytes of hex' } };
    const actual = blockHash(header);
    if (actual !== hash) return { ok: false, error: { kind: 'hash_mismatch', message: 'the header does not hash to the block hash it was fetched by', expected: hash, actual } };
    return { ok: true, value: header };
  }

  async function blockAt(height: number): Promise<Result<BlockAtHeight, HeaderSourceError>> {
    const hash = await blockHashAt(height);
    if (!hash.ok) return hash;
    const header = await headerByHash(hash.value);
    return header.ok ? { ok: true, value: { height, hash: hash.value, header: header.value } } : header;
  }

  /** For verifyDetachedFile. */
  const headerAt: HeaderLookup = async (height) => {
    const block = await blockAt(height);
    return block.ok ? { ok: true, value: block.value.header } : block;
  };

  return { blockHashAt, headerByHash, blockAt, headerAt };
}

export type EsploraHeaderSource = ReturnType<typeof esploraHeaderSource>;
