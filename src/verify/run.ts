// The offline verifier, a wing of its own that trusts only its input: `ledger verify` (cli/verify.ts)
// is its command line. Takes an export (file or URL), a chain URL (its
// pages followed) or a proof bundle (file or URL), checks everything canon_v1 §5 can check from
// it with the shared core, prints each check and a verdict, and exits 0 only when every check
// passes (1 when one fails, 2 when the input cannot be verified at all). It never talks to the
// service's database: the input is all it trusts, besides canon_v1.
import { GENESIS_PREV_HASH } from '../core/chain.ts';
import type { KeyInfo } from '../core/verify.ts';
import { defaultWorkerCount, inlineRunner, workerPool, type ChunkRunner } from './pool.ts';
import {
  CHECKS, MAX_LISTED, emptyTallies, joinEdge, verifyChunk, type CheckName, type ChunkInput, type ChunkResult, type Edge, type Failure, type Tally,
} from './records.ts';
import { openSource, UnusableInput, type ChainPage, type PublishedHead, type PublishedKey, type Source } from './sources.ts';
import {
  isLogDirectory, isLogUrl, publishedVkey, readPinnedCheckpoint, readVkey, tileSource, verifyBundleInclusion, verifyLog,
  type LogCheck, type PinnedCheckpoint,
} from './log.ts';
import { b64Decode } from '../core/base64.ts';
import { feedOf, newestOnFeed, readSeen, type SeenRecord } from './seen.ts';
import type { Hash } from '../core/merkle.ts';
import type { Vkey } from '../core/note.ts';

export type VerifyOptions = {
  /**
   * `<seq>:<chain_hash>` heads pinned earlier, each of which must still be in the chain; any other
   * value is a file holding a log checkpoint pinned earlier, with which the log must be consistent.
   */
  pins?: string[];
  /**
   * Proof bundles or /v1/ledger pages (files or URLs) seen before: every record of the agent they
   * show must be in the chain, unchanged (a head moved back hides the records after it).
   */
  seen?: string[];
  /** The global log's vkey (text or a file); default: the one the service publishes on /transparency. */
  vkey?: string;
  /** Worker threads; 0 verifies in the main thread. Default: one per core, up to 4. */
  workers?: number;
  fetcher?: typeof fetch;
};

/** Records per chunk of a chain page handed to a worker (exports come in blocks of as many). */
const CHUNK = 2000;
/** Chunks queued per worker before reading pauses (keeps memory flat). */
const QUEUE_PER_WORKER = 3;

type Pin = { seq: number; chainHash: string };

/** What a walk over records found. */
class Walk {
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

const CHAIN_PIN = /^[0-9]+:[0-9a-fA-F]*$/;

/** Splits --pin values into chain heads (`<seq>:<chain_hash>`) and pinned checkpoint files. */
export async function splitPins(pins: string[]): Promise<{ heads: Pin[]; checkpoints: PinnedCheckpoint[] }> {
  const heads = parsePins(pins.filter((p) => CHAIN_PIN.test(p)));
  const checkpoints = await Promise.all(pins.filter((p) => !CHAIN_PIN.test(p)).map(readPinnedCheckpoint));
  return { heads, checkpoints };
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
  for await (const chunk of chunks) {
    queue.push(runner().run({ ...base, ...chunk }));
    while (queue.length >= queueLimit) walk.add(await queue.shift()!);
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

// ---------------------------------------------------------------------------------------------

type Report = { title: string[]; walk: Walk; subject: string; log?: boolean };

/** Where the log's vkey comes from: --vkey, else what the service at `baseUrl` publishes. */
type LogContext = {
  vkey: Vkey | null;
  vkeyFrom: string;
  checkpoints: PinnedCheckpoint[];
  fetcher: typeof fetch;
};

async function resolveVkey(given: string | undefined, baseUrl: string | null, fetcher: typeof fetch): Promise<{ vkey: Vkey | null; vkeyFrom: string }> {
  if (given !== undefined) return { vkey: await readVkey(given), vkeyFrom: '--vkey' };
  if (baseUrl) {
    const vkey = await publishedVkey(baseUrl, fetcher);
    if (vkey) return { vkey, vkeyFrom: `published on ${baseUrl}/transparency` };
  }
  return { vkey: null, vkeyFrom: 'none' };
}

function addLogChecks(walk: Walk, checks: LogCheck[]): void {
  for (const c of checks) walk.check(c.name, c.ok, c.summary, c.failures);
}

/** The seqs whose chain_hash a walk keeps: pinned ones and those seen elsewhere. */
const watched = (pins: Pin[], seen: SeenRecord[]) => [...pins.map((p) => p.seq), ...seen.map((s) => s.seq)];

async function verifyExport(source: Extract<Source, { kind: 'export' }>, pins: Pin[], seenAll: SeenRecord[], runner: () => ChunkRunner, queueLimit: number): Promise<Report> {
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

async function verifyChainPages(source: Extract<Source, { kind: 'chain' }>, pins: Pin[], seenAll: SeenRecord[], runner: () => ChunkRunner, queueLimit: number): Promise<Report> {
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

async function verifyProof(source: Extract<Source, { kind: 'proof' }>, pins: Pin[], log: LogContext & { baseUrl: string | null }): Promise<Report> {
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

/** The consistency proof the service at baseUrl gives; null when it gives none. */
async function fetchConsistency(baseUrl: string, from: number, to: number, fetcher: typeof fetch): Promise<Hash[] | null> {
  try {
    const res = await fetcher(`${baseUrl}/log/proof/consistency?from=${from}&to=${to}`);
    if (res.status !== 200) return null;
    const body = (await res.json()) as { hashes?: unknown };
    if (!Array.isArray(body.hashes)) return null;
    const hashes = body.hashes.map((h) => (typeof h === 'string' ? b64Decode(h) : null));
    return hashes.every((h) => h !== null) ? (hashes as Hash[]) : null;
  } catch {
    return null;
  }
}

async function verifyLogSource(source: string, options: VerifyOptions, checkpoints: PinnedCheckpoint[], fetcher: typeof fetch): Promise<Report> {
  const baseUrl = isLogUrl(source) ? source.replace(/\/+$/, '').replace(/\/log$/, '') : null;
  const { vkey, vkeyFrom } = await resolveVkey(options.vkey, baseUrl, fetcher);
  const result = await verifyLog(tileSource(source, fetcher), { vkey, vkeyFrom, pins: checkpoints });
  const walk = new Walk(null);
  walk.records = result.entries;
  addLogChecks(walk, result.checks);
  return { title: [`global log (log_v1) from ${result.origin}`], walk, subject: 'the global log', log: true };
}

// ---------------------------------------------------------------------------------------------
// Printing

function tallyLine(name: string, t: Tally): string {
  const status = t.failed > 0 ? 'FAIL' : t.checked === 0 ? 'skip' : 'ok';
  const skipped = t.skipped > 0 ? `, ${t.skipped} not checked (not in the input)` : '';
  return `  ${status.padEnd(5)}${name.padEnd(18)}${t.checked} checked, ${t.failed} failed${skipped}`;
}

function failureLine(f: Failure): string {
  return `          ${f.where}: ${f.detail}`;
}

function bySeq(a: Failure, b: Failure): number {
  return (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER);
}

function print(report: Report, out: (line: string) => void, seconds: number, workers: number): void {
  for (const t of report.title) out(t);
  const { walk } = report;
  const failures = [...walk.failures].sort(bySeq);
  for (const [name, description] of report.log ? [] : CHECKS) {
    const t = walk.tallies[name];
    out(`${tallyLine(name, t)}  (${description})`);
    for (const f of failures.filter((x) => x.name === name)) out(failureLine(f));
  }
  const listed = walk.failures.length;
  if (walk.failureCount > listed) out(`          ... and ${walk.failureCount - listed} more failures not listed`);
  for (const c of walk.extra) {
    const status = c.ok === null ? 'note' : c.ok ? 'ok' : 'FAIL';
    out(`  ${status.padEnd(5)}${c.name.padEnd(18)}${c.summary}`);
    for (const f of c.failures) out(failureLine(f));
  }
  const rate = seconds > 0 ? Math.round(walk.records / seconds) : walk.records;
  out(`time: ${walk.records} records in ${seconds.toFixed(2)} s (${rate} records/s, ${workers === 0 ? 'main thread' : `${workers} worker threads`})`);
  out(walk.ok
    ? report.log
      ? `verdict: PASS: ${walk.records} entries of ${report.subject} verified (log_v1 §6 checks 2-4)`
      : `verdict: PASS: ${walk.records} records of ${report.subject} verified (canon_v1 §5 checks 1-5; check 6, anchoring, has nothing to check yet)`
    : `verdict: FAIL: ${failedNames(walk).join(', ')} failed; the listed seq/ids say where`);
}

function failedNames(walk: Walk): string[] {
  const names = (Object.entries(walk.tallies) as [string, Tally][]).filter(([, t]) => t.failed > 0).map(([n]) => n);
  for (const c of walk.extra) if (c.ok === false) names.push(c.name);
  return names;
}

// ---------------------------------------------------------------------------------------------

/** The --seen records, plus the agent's newest record on the service's /v1/ledger when the source is a service's export or chain. */
async function seenRecords(sourceArg: string, sources: string[], fetcher: typeof fetch): Promise<{ seen: SeenRecord[]; feedProblem: string | null }> {
  const seen = (await Promise.all(sources.map((s) => readSeen(s, fetcher)))).flat();
  const feed = feedOf(sourceArg);
  if (!feed) return { seen, feedProblem: null };
  const newest = await newestOnFeed(feed, fetcher);
  return typeof newest === 'string' ? { seen, feedProblem: newest } : { seen: [...seen, ...newest], feedProblem: null };
}

/** Runs the verifier; returns the exit code (0 pass, 1 a check failed, 2 unusable input). */
export async function runVerify(sourceArg: string, options: VerifyOptions, out: (line: string) => void): Promise<number> {
  const started = performance.now();
  let pool: ChunkRunner | null = null;
  const workers = options.workers ?? defaultWorkerCount();
  let chunksSeen = 0;
  // The first chunk runs inline; a pool starts only when there is more to do than one chunk.
  const runner = (): ChunkRunner => {
    chunksSeen++;
    if (workers === 0 || chunksSeen === 1) return inlineRunner;
    return (pool ??= workerPool(workers));
  };
  try {
    const { heads: pins, checkpoints } = await splitPins(options.pins ?? []);
    const fetcher = options.fetcher ?? fetch;
    if (isLogUrl(sourceArg) || await isLogDirectory(sourceArg)) {
      const report = await verifyLogSource(sourceArg, options, checkpoints, fetcher);
      print(report, out, (performance.now() - started) / 1000, 0);
      return report.walk.ok ? 0 : 1;
    }
    // Read before the chain: what the feed lists existed when the chain was read.
    const { seen, feedProblem } = await seenRecords(sourceArg, options.seen ?? [], fetcher);
    const source = await openSource(sourceArg, fetcher);
    const queueLimit = Math.max(1, workers) * QUEUE_PER_WORKER;
    const proofBase = source.kind === 'proof' ? /^(https?:\/\/.+)\/proof\/[^/]+$/i.exec(source.origin)?.[1] ?? null : null;
    const report = source.kind === 'export'
      ? await verifyExport(source, pins, seen, runner, queueLimit)
      : source.kind === 'chain'
        ? await verifyChainPages(source, pins, seen, runner, queueLimit)
        : await verifyProof(source, pins, { ...await resolveVkey(options.vkey, proofBase, fetcher), checkpoints, fetcher, baseUrl: proofBase });
    if (feedProblem) report.walk.check('head_behind', null, `the service's /v1/ledger could not be read, so the head was not compared with it: ${feedProblem}`);
    if (source.kind === 'proof' && seen.length > 0) report.walk.check('head_behind', null, '--seen records are compared with an export or a chain, not with a proof bundle');
    if (source.kind !== 'proof' && checkpoints.length > 0) {
      report.walk.check('pinned_checkpoint', null, 'a pinned checkpoint is checked against the log (<base_url>/log) or a proof bundle, not against an export or a chain');
    }
    print(report, out, (performance.now() - started) / 1000, pool ? workers : 0);
    return report.walk.ok ? 0 : 1;
  } catch (e) {
    if (e instanceof UnusableInput) {
      out(`verdict: UNUSABLE INPUT: ${e.message}`);
      return 2;
    }
    throw e;
  } finally {
    if (pool) await (pool as ChunkRunner).close();
  }
}
