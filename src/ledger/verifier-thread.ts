// Ed25519 verification off the event loop. One verify costs a large share of an unsigned write
// (bench/history/write.md), so the record path hands signatures to a worker thread: checks
// requested in one turn of the event loop go over as one transferred buffer (verify-batch.ts) and
// come back as one message, while the event loop parses the next requests. A batch the worker
// has not answered within `lateAfterMs` (a stuck or starved worker) is checked here instead, so a
// signed write never waits on a thread that stopped answering. The worker starts with the first check;
// until it is up, and for good if it fails, checks run here too: slower, never skipped.
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from '../runtime/worker.ts';
import { verifyRaw } from '../core/ed25519.ts';
import { packable, packJobs, type VerifyJob } from './verify-batch.ts';
import type { VerifyAnswer } from './verifier-worker.ts';

/** Resolves whether `signature` is `publicKey`'s signature over the UTF-8 bytes of `message`. */
export type Ed25519Verifier = (publicKey: Uint8Array, message: string, signature: Uint8Array) => Promise<boolean>;

const checkHere = (job: VerifyJob): boolean => verifyRaw(job.publicKey, Buffer.from(job.message, 'utf8'), job.signature);

/** Verifies on the calling thread. */
export const verifyHere: Ed25519Verifier = async (publicKey, message, signature) => checkHere({ publicKey, message, signature });

export type VerifierThreadOptions = {
  /** How long a sent batch may go unanswered before its checks run on the event loop. */
  lateAfterMs?: number;
  /** Told the size of each batch checked here because the worker was late. */
  onLate?: (jobs: number) => void;
  /** The worker's module, `.js` or `.ts` (tests swap in one that answers late and wrong). */
  workerEntry?: URL;
};

export class VerifierThread {
  private worker: Worker | null = null;
  private ready = false;
  private failed = false;
  private queued: VerifyJob[] = [];
  private flushScheduled = false;
  /** Resolvers of sent jobs by job number; a batch's jobs are numbered consecutively. */
  private readonly waiting = new Map<number, { job: VerifyJob; resolve: (ok: boolean) => void }>();
  private nextJob = 0;
  private queuedFrom = 0;
  /** Batches sent and not yet answered, by first job number, each with its lateness timer. */
  private readonly sent = new Map<number, { count: number; late: NodeJS.Timeout }>();
  private readonly lateAfterMs: number;
  private readonly onLate: (jobs: number) => void;
  private readonly workerEntry: URL;

  private readyNow: () => void = () => undefined;
  private neverReady: (err: Error) => void = () => undefined;
  /** Resolves once checks go to the worker; rejects if it fails or is closed first (tests wait for it). */
  readonly whenReady: Promise<void> = new Promise((resolve, reject) => {
    this.readyNow = resolve;
    this.neverReady = reject;
  });

  constructor(options: VerifierThreadOptions = {}) {
    this.lateAfterMs = options.lateAfterMs ?? 200;
    this.onLate = options.onLate ?? (() => undefined);
    this.workerEntry = options.workerEntry ?? siblingModule('verifier-worker', import.meta.url);
    this.whenReady.catch(() => undefined); // nobody need wait for it
  }

  private start(): void {
    const worker = startWorker(this.workerEntry);
    worker.unref();
    worker.on('message', (m: VerifyAnswer | 'ready') => {
      if (m !== 'ready') return this.answered(m);
      this.ready = true;
      this.readyNow();
    });
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    this.worker = worker;
  }

  /** Starts the worker ahead of the first check. */
  warmUp(): this {
    if (!this.worker && !this.failed) this.start();
    return this;
  }

  readonly verify: Ed25519Verifier = (publicKey, message, signature) => {
    if (!this.ready || this.failed) {
      this.warmUp();
      return verifyHere(publicKey, message, signature);
    }
    const job: VerifyJob = { publicKey, message, signature };
    if (!packable(job)) return Promise.resolve(false);
    return new Promise((resolve) => {
      if (this.queued.length === 0) this.queuedFrom = this.nextJob;
      this.waiting.set(this.nextJob++, { job, resolve });
      this.queued.push(job);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  };

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.fail();
    await worker?.terminate();
  }

  private flush(): void {
    this.flushScheduled = false;
    const jobs = this.queued;
    this.queued = [];
    if (jobs.length === 0 || !this.worker) return;
    const first = this.queuedFrom;
    const bytes = packJobs(jobs);
    this.worker.postMessage({ first, bytes }, [bytes.buffer as ArrayBuffer]);
    this.sent.set(first, { count: jobs.length, late: setTimeout(() => this.checkLateBatch(first), this.lateAfterMs) });
  }

  private answered({ first, results }: VerifyAnswer): void {
    const batch = this.sent.get(first);
    if (!batch) return; // already checked here: it came too late
    clearTimeout(batch.late);
    this.sent.delete(first);
    results.forEach((result, i) => this.settle(first + i, () => result === 1));
  }

  private checkLateBatch(first: number): void {
    const batch = this.sent.get(first);
    if (!batch) return;
    this.sent.delete(first);
    this.onLate(batch.count);
    for (let i = 0; i < batch.count; i++) this.settle(first + i, checkHere);
  }

  private settle(jobNumber: number, answer: (job: VerifyJob) => boolean): void {
    const waiting = this.waiting.get(jobNumber);
    if (!waiting) return;
    this.waiting.delete(jobNumber);
    waiting.resolve(answer(waiting.job));
  }

  /** Answers every job still out here, and every later one too. */
  private fail(): void {
    if (!this.ready) this.neverReady(new Error('the verifier thread stopped before it was ready; checks run on the event loop'));
    this.failed = true;
    this.queued = [];
    for (const { late } of this.sent.values()) clearTimeout(late);
    this.sent.clear();
    for (const { job, resolve } of this.waiting.values()) resolve(checkHere(job));
    this.waiting.clear();
  }
}

/** An `onLate` that tells the operator, at most once per `everyMs`, how many checks ran on the event loop since it last did. */
export function warnWhenLate(warn: (message: string) => void, everyMs = 60_000, now = Date.now): (jobs: number) => void {
  let count = 0;
  let warnedAt = -Infinity;
  return (jobs) => {
    count += jobs;
    if (now() - warnedAt < everyMs) return;
    warn(`${count} signature checks ran on the event loop because the verifier thread answered late: this machine has no CPU to spare for it`);
    count = 0;
    warnedAt = now();
  };
}
