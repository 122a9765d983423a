// The offline verifier, a wing of its own that trusts only its input: `ledger verify` (cli/verify.ts)
// is its command line. Takes an export (file or URL), a chain URL (its
// pages followed) or a proof bundle (file or URL), checks everything canon_v1 §5 can check from
// it with the shared core, prints each check and a verdict, and exits 0 only when every check
// passes (1 when one fails, 2 when the input cannot be verified at all). It never talks to the
// service's database: the input is all it trusts, besides canon_v1.
import { defaultWorkerCount, workerPool } from './pool.ts';
import { CHECKS, type Failure, type Tally } from './records.ts';
import { openSource, UnusableInput } from './sources.ts';
import { isLogDirectory, isLogUrl, publishedVkey, readPinnedCheckpoint, readVkey, tileSource, verifyLog, type PinnedCheckpoint } from './log.ts';
import {
  QUEUE_PER_WORKER, addLogChecks, inlineRunner, parsePins, verifyChainPages, verifyExport, verifyProof, Walk,
  type ChunkRunner, type Pin, type Report,
} from './walk.ts';
import type { Vkey } from '../core/note.ts';
import type { WitnessPolicy } from '../core/witness-policy.ts';
import { feedOf, newestOnFeed, readSeen, type SeenRecord } from './seen.ts';
import { boundedFetch, DEFAULT_BOUNDS, type BoundedFetch } from './bounds.ts';

export { parsePins } from './walk.ts';

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
  /** Every checkpoint verified must carry cosignatures satisfying it (readWitnessPolicy). */
  witnessPolicy?: WitnessPolicy | null;
  /** Worker threads; 0 verifies in the main thread. Default: one per core, up to 4. */
  workers?: number;
  /** Every request under the bounds (bounds.ts), shared with what the caller reads after; default: DEFAULT_BOUNDS over `fetcher`. */
  bounded?: BoundedFetch;
  fetcher?: typeof fetch;
};

const CHAIN_PIN = /^[0-9]+:[0-9a-fA-F]*$/;

/** Splits --pin values into chain heads (`<seq>:<chain_hash>`) and pinned checkpoint files. */
export async function splitPins(pins: string[]): Promise<{ heads: Pin[]; checkpoints: PinnedCheckpoint[] }> {
  const heads = parsePins(pins.filter((p) => CHAIN_PIN.test(p)));
  const checkpoints = await Promise.all(pins.filter((p) => !CHAIN_PIN.test(p)).map(readPinnedCheckpoint));
  return { heads, checkpoints };
}

// ---------------------------------------------------------------------------------------------

async function resolveVkey(given: string | undefined, baseUrl: string | null, fetcher: typeof fetch): Promise<{ vkey: Vkey | null; vkeyFrom: string }> {
  if (given !== undefined) return { vkey: await readVkey(given), vkeyFrom: '--vkey' };
  if (baseUrl) {
    const vkey = await publishedVkey(baseUrl, fetcher);
    if (vkey) return { vkey, vkeyFrom: `published on ${baseUrl}/transparency` };
  }
  return { vkey: null, vkeyFrom: 'none' };
}

async function verifyLogSource(source: string, options: VerifyOptions, checkpoints: PinnedCheckpoint[], fetcher: typeof fetch): Promise<Report> {
  const baseUrl = isLogUrl(source) ? source.replace(/\/+$/, '').replace(/\/log$/, '') : null;
  const { vkey, vkeyFrom } = await resolveVkey(options.vkey, baseUrl, fetcher);
  const result = await verifyLog(tileSource(source, fetcher), { vkey, vkeyFrom, pins: checkpoints, witnessPolicy: options.witnessPolicy ?? null });
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

/** A bound passed: one line, exit 2, whatever the run had found (the server could have steered it). */
function unusable(bounded: BoundedFetch, out: (line: string) => void): number {
  out(`verdict: UNUSABLE INPUT: ${bounded.breach}`);
  return 2;
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
  const bounded = options.bounded ?? boundedFetch(DEFAULT_BOUNDS, { streamNdjson: true, ...(options.fetcher ? { fetcher: options.fetcher } : {}) });
  try {
    const { heads: pins, checkpoints } = await splitPins(options.pins ?? []);
    const fetcher = bounded.fetch;
    if (isLogUrl(sourceArg) || await isLogDirectory(sourceArg)) {
      const report = await verifyLogSource(sourceArg, options, checkpoints, fetcher);
      if (bounded.breach !== null) return unusable(bounded, out);
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
        : await verifyProof(source, pins, { ...await resolveVkey(options.vkey, proofBase, fetcher), checkpoints, fetcher, baseUrl: proofBase, witnessPolicy: options.witnessPolicy ?? null });
    if (feedProblem) report.walk.check('head_behind', null, `the service's /v1/ledger could not be read, so the head was not compared with it: ${feedProblem}`);
    if (source.kind === 'proof' && seen.length > 0) report.walk.check('head_behind', null, '--seen records are compared with an export or a chain, not with a proof bundle');
    if (source.kind !== 'proof' && options.witnessPolicy) {
      report.walk.check('witnesses', null, 'a witness policy is checked on a checkpoint: verify the log (<base_url>/log) or a proof bundle; an export or a chain has none');
    }
    if (source.kind !== 'proof' && checkpoints.length > 0) {
      report.walk.check('pinned_checkpoint', null, 'a pinned checkpoint is checked against the log (<base_url>/log) or a proof bundle, not against an export or a chain');
    }
    if (bounded.breach !== null) return unusable(bounded, out);
    print(report, out, (performance.now() - started) / 1000, pool ? workers : 0);
    return report.walk.ok ? 0 : 1;
  } catch (e) {
    if (bounded.breach !== null) return unusable(bounded, out);
    if (e instanceof UnusableInput) {
      out(`verdict: UNUSABLE INPUT: ${e.message}`);
      return 2;
    }
    throw e;
  } finally {
    if (!options.bounded) bounded.close();
    if (pool) await (pool as ChunkRunner).close();
  }
}
