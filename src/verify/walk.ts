// A walk over published records, whatever they came in (an export's blocks, a chain's pages,
// one proof bundle): chunks verified with records.ts, joined in order, then the published head,
// the record count, pins and a proof's log checks; the result is a Report of every check.
// Pure (fetch and the core only): `ledger verify` (run.ts) prints it, with worker threads for
// large inputs; the client (src/client) returns it, in Node or a browser.
import { GENESIS_PREV_HASH } from '../core/chain.ts';
import type { KeyInfo } from '../core/verify.ts';
import type { Vkey } from '../core/note.ts';
import type { WitnessPolicy } from '../core/witness-policy.ts';
import {
  CHECKS, MAX_LISTED, emptyTallies, joinEdge, verifyChunk, type CheckName, type ChunkInput, type ChunkResult, type Edge, type Failure, type Tally,
} from './records.ts';
import { UnusableInput, type ChainPage, type PublishedHead, type PublishedKey, type Source } from './documents.ts';
import type { SeenRecord } from './seen.ts';
import { fetchConsistency, verifyBundleInclusion, type LogCheck, type PinnedCheckpoint } from './proof.ts';

/** Verifies chunks of records: in the calling thread (inlineRunner) or on worker threads (pool.ts). */
export type ChunkRunner = {
  run(input: ChunkInput): Promise<ChunkResult>;
  close(): Promise<void>;
};

/** Verifies in the calling thread. */
export const inlineRunner: ChunkRunner = {
  run: async (input) => verifyChunk(input),
  close: async () => undefined,
};

/** Records per chunk of a chain page handed to a worker (exports come in blocks of as many). */
export const CHUNK = 2000;
/** Chunks queued per worker before reading pauses (keeps memory flat). */
export const QUEUE_PER_WORKER = 3;

export type Pin = { seq: number; chainHash: string };

/** What a walk over records found. */
export class Walk {
  tallies = emptyTallies();
  failures: Failure[] = [];
  failureCount = 0;
  records = 0;
  last: Edge | null;
  pinned = new Map<number, string>();
  extra: { name: string; ok: boolean | null; summary: string; failures: Failure[] }[] = [];

  constructor(anchor: Edge | null) {
    this.last = anchor;
  }

  private addFailure(f: Failure): void {
    this.failureCount++;
    if (this.failures.length < MAX_LISTED) this.failures.push(f);
  }

  add(result: ChunkResult): void {
    if (result.first) {
      for (const f of joinEdge(this.last, result.first)) {
        this.tallies[f.name as CheckName].failed++;
        this.addFailure(f);
      }
    }
    for (const [name, t] of Object.entries(result.tallies) as [CheckName, Tally][]) {
      const mine = this.tallies[name];
      mine.checked += t.checked;
      mine.failed += t.failed;
      mine.skipped += t.skipped;
    }
    for (const f of result.failures) this.addFailure(f);
    this.failureCount += result.failureCount - result.failures.length;
    this.records += result.records;
    if (result.last) this.last = result.last;
    for (const [seq, hash] of Object.entries(result.pinned)) this.pinned.set(Number(seq), hash);
  }

  check(name: string, ok: boolean | null, summary: string, failures: Failure[] = []): void {
    this.extra.push({ name, ok, summary, failures });
  }

  get ok(): boolean {
    return this.failureCount === 0 && Object.values(this.tallies).every((t) => t.failed === 0) && this.extra.every((c) => c.ok !== false);
  }
}

export function parsePins(pins: string[]): Pin[] {
  return pins.map((p) => {
    const m = /^([1-9][0-9]*):([0-9a-f]{64})$/.exec(p);
    if (!m) throw new UnusableInput(`--pin must be <seq>:<chain_hash> (64 lower-case hex), got ${JSON.stringify(p)}`);
    return { seq: Number(m[1]), chainHash: m[2]! };
  });
}

const toKeyInfo = (keys: PublishedKey[]): KeyInfo[] => keys.map((k) => ({ id: k.id, public_key: k.public_key, revoked_at: k.revoked_at }));

const GENESIS: Edge = { seq: 0, id: '', prev_hash: '', chain_hash: GENESIS_PREV_HASH, recorded_at: '' };

/** Feeds chunks to the runner, keeping a bounded queue, folding results in order. */
async function walkChunks(
  walk: Walk,
  chunks: AsyncIterable<{ records?: unknown[]; bytes?: Uint8Array; firstLine?: number }>,
  base: Omit<ChunkInput, 'records' | 'bytes' | 'firstLine'>,
  runner: () => ChunkRunner,
  queueLimit: number,
): Promise<void> {
  const queue: Promise<ChunkResult>[] = [];
  try {
    for await (const chunk of chunks) {
      queue.push(runner().run({ ...base, ...chunk }));
      while (queue.length >= queueLimit) walk.add(await queue.shift()!);
    }
  } catch (e) {
    // The source broke off (a bound passed): the chunks queued are abandoned, and the pool, closed
    // next, rejects them; that must not surface as an unhandled rejection (exit 1).
    for (const abandoned of queue) abandoned.catch(() => undefined);
    throw e;
  }
  while (queue.length > 0) walk.add(await queue.shift()!);
}

function headCheck(walk: Walk, head: PublishedHead, what: string): void {
  const last = walk.last;
  const lastSeq = last?.seq ?? 0;
  const lastHash = last?.chain_hash ?? GENESIS_PREV_HASH;
  const ok = lastSeq === head.seq && lastHash === head.chain_hash;
  walk.check('head', ok, ok
    ? `the last record is the ${what} (seq ${head.seq}, chain_hash ${head.chain_hash})`
    : `the ${what} is seq ${head.seq} chain_hash ${head.chain_hash}, but the records end at seq ${lastSeq} chain_hash ${lastHash}`);
}

/** `complete`: the walk reached the published head, so a record past it means the head is behind. */
function pinCheck(walk: Walk, pins: Pin[], complete: boolean): void {
  if (pins.length === 0) return;
  const failures: Failure[] = [];
  const lastSeq = walk.last?.seq ?? 0;
  for (const p of pins) {
    const found = walk.pinned.get(p.seq);
    if (found === undefined && complete && p.seq > lastSeq) {
      failures.push({ name: 'pin', where: `seq ${p.seq}`, detail: `the chain's head (seq ${lastSeq}) is behind this pinned record: records published before are missing (the head was moved back or the chain cut)` });
    } else if (found === undefined) failures.push({ name: 'pin', where: `seq ${p.seq}`, detail: 'the pinned record is not in what was verified' });
    else if (found !== p.chainHash) failures.push({ name: 'pin', where: `seq ${p.seq}`, detail: `pinned chain_hash ${p.chainHash}, the chain has ${found}: history was rewritten` });
  }
  walk.check('pin', failures.length === 0, `${pins.length} pinned head(s) still in the chain: ${pins.length - failures.length} of ${pins.length}`, failures);
}

/** Every record seen elsewhere (--seen, the service's /v1/ledger) is in the chain, unchanged. */
function seenCheck(walk: Walk, seen: SeenRecord[], complete: boolean): void {
  if (seen.length === 0) return;
  const lastSeq = walk.last?.seq ?? 0;
  const failures: Failure[] = [];
  let compared = 0;
  for (const s of [...seen].sort((a, b) => a.seq - b.seq)) {
    const where = `seq ${s.seq} (${s.from})`;
    const found = walk.pinned.get(s.seq);
    if (found === undefined && complete && s.seq > lastSeq) {
      failures.push({ name: 'head_behind', where, detail: `seen with chain_hash ${s.chainHash}, but the chain ends at seq ${lastSeq}: its head is behind records published elsewhere (moved back, or the chain cut)` });
    } else if (found !== undefined && found !== s.chainHash) {
      failures.push({ name: 'head_behind', where, detail: `seen with chain_hash ${s.chainHash}, the chain has ${found}: history was rewritten` });
    } else if (found !== undefined) compared++;
  }
  const unchecked = seen.length - compared - failures.length;
  const rest = unchecked > 0 ? `; ${unchecked} outside what was verified` : '';
  walk.check('head_behind', failures.length === 0, failures.length === 0
    ? `${compared} record(s) seen elsewhere are in the chain, unchanged${rest}`
    : `${failures.length} of ${seen.length} record(s) seen elsewhere are not in the chain as seen`, failures);
}

/** The seqs whose chain_hash a walk keeps: pinned ones and those seen elsewhere. */
const watched = (pins: Pin[], seen: SeenRecord[]) => [...pins.map((p) => p.seq), ...seen.map((s) => s.seq)];

// ---------------------------------------------------------------------------------------------

export type Report = { title: string[]; walk: Walk; subject: string; log?: boolean };

/** Where the log's vkey comes from: --vkey, else what the service at `baseUrl` publishes. */
export type LogContext = {
  vkey: Vkey | null;
  vkeyFrom: string;
  checkpoints: PinnedCheckpoint[];
  fetcher: typeof fetch;
  /** The bundle's checkpoint must satisfy it (--witness-policy, --witness, --quorum). */
  witnessPolicy?: WitnessPolicy | null;
};

export function addLogChecks(walk: Walk, checks: LogCheck[]): void {
  for (const c of checks) walk.check(c.name, c.ok, c.summary, c.failures);
}

export async function verifyExport(source: Extract<Source, { kind: 'export' }>, pins: Pin[], seenAll: SeenRecord[], runner: () => ChunkRunner, queueLimit: number): Promise<Report> {
  const { header } = source;
  const walk = new Walk(GENESIS);
  const seen = seenAll.filter((s) => s.agent === header.agent.handle);
  await walkChunks(walk, source.blocks, { agent: header.agent.handle, keys: toKeyInfo(header.keys), pins: watched(pins, seen), requireContent: true }, runner, queueLimit);
  headCheck(walk, header.head, 'export header\'s head');
  walk.check('record_count', walk.records === header.records, `the header announces ${header.records} records; the export holds ${walk.records}`);
  pinCheck(walk, pins, true);
  seenCheck(walk, seen, true);
  return {
    title: [`export of agent ${header.agent.handle} (${header.format}) from ${source.origin}`, `published head: seq ${header.head.seq}, chain_hash ${header.head.chain_hash}`],
    walk,
    subject: header.agent.handle,
  };
}

export async function verifyChainPages(source: Extract<Source, { kind: 'chain' }>, pins: Pin[], seenAll: SeenRecord[], runner: () => ChunkRunner, queueLimit: number): Promise<Report> {
  const first = source.first;
  const agent = first.agent;
  const seen = seenAll.filter((s) => s.agent === agent);
  const walk = new Walk(first.after_seq === 0 ? GENESIS : null);
  let lastPage: ChainPage = first;
  let keys = first.keys;
  async function* chunks() {
    for await (const page of source.pages) {
      lastPage = page;
      if (page.agent !== agent) throw new UnusableInput(`a later page is of agent ${page.agent}, not ${agent}`);
      keys = page.keys;
      payloads = page.payloads !== false;
      for (let i = 0; i < page.records.length; i += CHUNK) yield { records: page.records.slice(i, i + CHUNK) };
    }
  }
  // Each page carries the agent's keys; a chunk is verified with the keys of its own page.
  let payloads = first.payloads !== false;
  const base = {
    agent,
    get keys() { return toKeyInfo(keys); },
    get requireContent() { return payloads; },
    pins: watched(pins, seen),
  };
  await walkChunks(walk, chunks(), base, runner, queueLimit);
  if (first.after_seq > 0) walk.check('start', null, `the walk starts after seq ${first.after_seq}: the link to seq ${first.after_seq} is not checked`);
  if (lastPage.has_more) walk.check('head', null, `stopped before the head (seq ${lastPage.head.seq}): this page has more`);
  else headCheck(walk, lastPage.head, 'chain\'s head');
  pinCheck(walk, pins, !lastPage.has_more);
  seenCheck(walk, seen, !lastPage.has_more);
  return {
    title: [`chain of agent ${agent} from ${source.origin}`, `published head: seq ${first.head.seq}, chain_hash ${first.head.chain_hash}`],
    walk,
    subject: agent,
  };
}

export async function verifyProof(source: Extract<Source, { kind: 'proof' }>, pins: Pin[], log: LogContext & { baseUrl: string | null }): Promise<Report> {
  const { bundle } = source;
  const record = bundle.record as { entry?: { seq?: unknown } } | undefined;
  const seq = typeof record?.entry?.seq === 'string' ? Number(record.entry.seq) : NaN;
  const walk = new Walk(seq === 1 ? GENESIS : null);
  walk.add(verifyChunk({
    agent: bundle.agent.handle,
    keys: bundle.key ? toKeyInfo([bundle.key]) : [],
    records: [bundle.record],
    pins: pins.map((p) => p.seq),
    requireContent: true,
  }));
  if (seq !== 1) walk.check('prev_hash_link', null, `the link to seq ${seq - 1} is not checked from a proof alone: verify the chain for that`);
  const head = bundle.agent.head;
  if (Number.isSafeInteger(seq)) {
    const ok = seq < head.seq || (seq === head.seq && walk.last?.chain_hash === head.chain_hash);
    walk.check('head', ok, ok
      ? `the record (seq ${seq}) is within the agent's published head (seq ${head.seq})`
      : `the record (seq ${seq}) is not covered by the published head (seq ${head.seq}, chain_hash ${head.chain_hash})`);
  }
  const { baseUrl } = log;
  addLogChecks(walk, await verifyBundleInclusion(bundle, {
    ...log,
    pins: log.checkpoints,
    consistency: baseUrl ? (from, to) => fetchConsistency(baseUrl, from, to, log.fetcher) : null,
  }));
  walk.check('anchor_proof', null, bundle.anchor_proof === null
    ? 'none in the bundle: not anchored yet (canon_v1 §5 check 6 cannot run)'
    : 'checked below up to a Bitcoin block header (anchor_proof)');
  pinCheck(walk, pins, false);
  return { title: [`proof bundle of ${bundle.id} (agent ${bundle.agent.handle}) from ${source.origin}`], walk, subject: bundle.agent.handle };
}

// ---------------------------------------------------------------------------------------------

/** One check of a verification: ok true or false, or null when the input had nothing to check. */
export type VerifiedCheck = { name: string; ok: boolean | null; summary: string; failures: Failure[] };

/** A Report as data (what `ledger verify` prints): every check with its failures, and the verdict. */
export type Verification = {
  ok: boolean;
  subject: string;
  title: string[];
  records: number;
  checks: VerifiedCheck[];
  /** All failures, including those beyond the listed ones. */
  failureCount: number;
};

export function verificationOf(report: Report): Verification {
  const { walk } = report;
  const tallied = report.log ? [] : CHECKS.map(([name, description]): VerifiedCheck => {
    const t = walk.tallies[name];
    const skipped = t.skipped > 0 ? `, ${t.skipped} not checked (not in the input)` : '';
    return {
      name,
      ok: t.failed > 0 ? false : t.checked === 0 ? null : true,
      summary: `${description}: ${t.checked} checked, ${t.failed} failed${skipped}`,
      failures: walk.failures.filter((f) => f.name === name),
    };
  });
  const extra = walk.extra.map((c) => ({ name: c.name, ok: c.ok, summary: c.summary, failures: c.failures }));
  const failureCount = walk.failureCount + extra.reduce((n, c) => n + (c.ok === false ? Math.max(1, c.failures.length) : 0), 0);
  return { ok: walk.ok, subject: report.subject, title: report.title, records: walk.records, checks: [...tallied, ...extra], failureCount };
}
