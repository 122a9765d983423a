// The binding of a performance report's inputs to the agent's own chain (issue 41): a recomputation
// proves something of an agent only when its inputs are that agent's records. It owns three checks,
// each naming the record at fault:
//  - the agent's chain, as the service publishes it (GET /v1/agents/{handle}/chain, page by page),
//    verifies from seq 1 through the report's through_seq (canon_v1 §5 checks 1-5, walk.ts);
//  - each record line of the inputs bundle is the chain's record at its chain_seq (id, type,
//    recorded_at, content text hashing to content_hash), and the lines are exactly the chain's
//    records of the kinds the report applies through through_seq (none left out, none added);
//  - the record at through_seq, whose chain_hash commits to every record before it, is in the
//    global log (its proof bundle, proof.ts), where the service has integrated it.
// The prices observed at receipt, the corporate actions and the closes are market data, not hashed
// in the chain: they are not bound here (performance.ts computes with them as given).
import { sha256Hex } from '../core/sha256.ts';
import type { RecordLine } from '../method/perf/bundle.ts';
import type { Portfolio } from '../method/perf/engine.ts';
import { openUrl, UnusableInput, type ChainPage, type Source } from './documents.ts';
import { publishedVkey } from './proof.ts';
import type { Failure } from './records.ts';
import { defaultWorkerCount, workerPool } from './pool.ts';
import { QUEUE_PER_WORKER, inlineRunner, verificationOf, verifyChainPages, verifyProof, type ChunkRunner, type Verification } from './walk.ts';

/** What the binding needs of one chain record (seq at most through_seq). */
export type ChainSummary = { seq: number; id: string; type: string; recorded_at: string; content_hash: string; chain_hash: string };

/** The record types a portfolio's report applies (the bundle's record lines: docs/perf_v1.md §8). */
export const APPLIED_TYPES: Record<Portfolio, readonly string[]> = { model: ['decision'], broker: ['execution', 'activity'] };

/** Records per chain page asked for (the endpoint's maximum is 2000). */
const CHAIN_PAGE = 1000;

/** A chain page's record as its summary, or null when it has not the published form (the walk reports it). */
function summaryOf(raw: unknown): ChainSummary | null {
  const r = raw as { entry?: Record<string, unknown>; chain_hash?: unknown } | null;
  const e = r?.entry;
  if (typeof e !== 'object' || e === null || typeof e.seq !== 'string' || !/^[1-9][0-9]{0,15}$/.test(e.seq)) return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { seq: Number(e.seq), id: text(e.id), type: text(e.type), recorded_at: text(e.recorded_at), content_hash: text(e.content_hash), chain_hash: text(r!.chain_hash) };
}

/**
 * The chain's pages cut at through_seq: each record up to it summarised into `kept`, no page asked
 * past the one holding it (the last page says it has more when records follow).
 */
async function* pagesThrough(pages: AsyncIterable<ChainPage>, throughSeq: number, kept: Map<number, ChainSummary>): AsyncGenerator<ChainPage> {
  let highest = 0;
  for await (const page of pages) {
    const records = page.records.filter((raw) => {
      const s = summaryOf(raw);
      if (s === null) return true;
      if (s.seq > throughSeq) return false;
      kept.set(s.seq, s);
      highest = Math.max(highest, s.seq);
      return true;
    });
    const cut = records.length < page.records.length;
    yield cut ? { ...page, records, has_more: true } : page;
    if (cut || highest >= throughSeq) return;
  }
}

export type ChainThrough = { verification: Verification; records: Map<number, ChainSummary>; head: number };

/** The agent's chain from seq 1 through `throughSeq`, verified, with its records summarised. */
export async function chainThrough(root: string, handle: string, throughSeq: number, fetcher: typeof fetch, pageSize = CHAIN_PAGE): Promise<ChainThrough> {
  const url = `${root}/v1/agents/${encodeURIComponent(handle)}/chain?limit=${pageSize}`;
  const source = await openUrl(url, fetcher);
  if (source.kind !== 'chain') throw new UnusableInput(`${url} is not a chain page`);
  if (source.first.agent !== handle) throw new UnusableInput(`${url} is the chain of agent ${JSON.stringify(source.first.agent)}, not ${JSON.stringify(handle)}`);
  if (source.first.after_seq !== 0) throw new UnusableInput(`${url} does not start at seq 1 (after_seq ${source.first.after_seq})`);
  const records = new Map<number, ChainSummary>();
  const cut: Extract<Source, { kind: 'chain' }> = { ...source, pages: pagesThrough(source.pages, throughSeq, records) };
  // As `ledger verify` runs: the first chunk in this thread, worker threads once there is more.
  const workers = defaultWorkerCount();
  let pool: ChunkRunner | null = null;
  let chunks = 0;
  const runner = (): ChunkRunner => (++chunks === 1 ? inlineRunner : (pool ??= workerPool(workers)));
  try {
    const report = await verifyChainPages(cut, [], [], runner, workers * QUEUE_PER_WORKER);
    return { verification: verificationOf(report), records, head: source.first.head.seq };
  } finally {
    if (pool !== null) await (pool as ChunkRunner).close();
  }
}

const where = (seq: number, id: string) => `record seq ${seq} (${id})`;

/** Why one record line is not the chain's record at its chain_seq, or null. */
function lineProblem(line: RecordLine, c: ChainSummary | undefined, types: readonly string[], portfolio: Portfolio): string | null {
  const at = where(line.chain_seq, line.id);
  if (c === undefined) return `${at} of the inputs is not in the agent's chain`;
  if (c.id !== line.id) return `${at} of the inputs: the chain's record at seq ${c.seq} is ${c.id}`;
  if (c.type !== line.type) return `${at} of the inputs is of type ${JSON.stringify(line.type)}, the chain's of type ${JSON.stringify(c.type)}`;
  if (!types.includes(line.type)) return `${at} of the inputs is of type ${JSON.stringify(line.type)}: the ${portfolio} report applies only ${types.join(' and ')} records`;
  if (c.recorded_at !== line.recorded_at) return `${at} of the inputs says recorded_at ${line.recorded_at}, the chain ${c.recorded_at}`;
  const hash = typeof line.content === 'string' ? sha256Hex(line.content) : null;
  if (hash !== c.content_hash) return `${at} of the inputs: its content hashes to ${hash ?? '(no content text)'}, the chain's content_hash is ${c.content_hash}`;
  return null;
}

/**
 * Why the bundle's record lines are not exactly the chain's records of the report's types through
 * through_seq, in chain order, each the same record (naming the first at fault), or null.
 */
export function bindingOfRecords(lines: RecordLine[], chain: Map<number, ChainSummary>, portfolio: Portfolio, throughSeq: number): string | null {
  const types = APPLIED_TYPES[portfolio];
  let previous = 0;
  for (const line of lines) {
    const seq = line.chain_seq;
    if (!Number.isSafeInteger(seq) || seq <= previous) return `${where(seq, line.id)} of the inputs comes after seq ${previous}: a record added, repeated or out of chain order`;
    if (seq > throughSeq) return `${where(seq, line.id)} of the inputs is past the report's through_seq ${throughSeq}`;
    for (let s = previous + 1; s < seq; s++) {
      const left = chain.get(s);
      if (left !== undefined && types.includes(left.type)) return `${where(s, left.id)}, the chain's ${left.type}, is not in the inputs: left out`;
    }
    const p = lineProblem(line, chain.get(seq), types, portfolio);
    if (p !== null) return p;
    previous = seq;
  }
  for (let s = previous + 1; s <= throughSeq; s++) {
    const left = chain.get(s);
    if (left !== undefined && types.includes(left.type)) return `${where(s, left.id)}, the chain's ${left.type}, is not in the inputs: left out`;
  }
  return null;
}

/** The first failure of a verification, as one line naming where. */
export function firstFailure(v: Verification): string {
  for (const c of v.checks) {
    if (c.ok !== false) continue;
    const f: Failure | undefined = c.failures[0];
    return f === undefined ? `${c.name}: ${c.summary}` : `${c.name} at ${f.where}: ${f.detail}`;
  }
  return 'a check failed';
}

export type LogBinding = { ok: boolean | null; line: string };

/**
 * The record at through_seq in the global log: its proof bundle verifies (the record, its inclusion
 * under a checkpoint signed by the log key the service publishes) and is the chain's record. A
 * record not integrated yet, or a log without a published key, is a note.
 */
export async function throughSeqInLog(root: string, last: ChainSummary, fetcher: typeof fetch): Promise<LogBinding> {
  const api = `${root}/v1`;
  const at = where(last.seq, last.id);
  const source = await openUrl(`${api}/proof/${encodeURIComponent(last.id)}`, fetcher);
  if (source.kind !== 'proof') throw new UnusableInput(`${api}/proof/${last.id} is not a proof bundle`);
  const proven = (source.bundle.record as { chain_hash?: unknown } | null)?.chain_hash;
  if (proven !== last.chain_hash) return { ok: false, line: `${at}: its proof bundle holds chain_hash ${String(proven)}, the chain ${last.chain_hash}` };
  const vkey = await publishedVkey(api, fetcher);
  const report = await verifyProof(source, [], { vkey, vkeyFrom: vkey ? `published on ${api}/transparency` : 'none', checkpoints: [], fetcher, baseUrl: api, witnessPolicy: null });
  const v = verificationOf(report);
  if (!v.ok) return { ok: false, line: `${at}: its proof bundle does not verify: ${firstFailure(v)}` };
  const inclusion = v.checks.find((c) => c.name === 'inclusion_proof');
  const signed = v.checks.find((c) => c.name === 'checkpoint');
  if (inclusion?.ok !== true) return { ok: null, line: `${at} is not in the global log yet (its proof bundle has no inclusion proof: look again shortly); the chain is verified without it` };
  if (signed?.ok !== true) return { ok: null, line: `${at}: ${inclusion.summary}; ${signed?.summary ?? 'the checkpoint is not checked'}` };
  return { ok: true, line: `${at}: ${inclusion.summary}, ${signed.summary}` };
}
