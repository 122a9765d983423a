// Ed25519 verification off the event loop. One verify costs about as much as a third of an
// unsigned write, so the record path hands signatures to a worker thread: checks requested in
// one turn of the event loop go over as one transferred buffer (verify-batch.ts) and come back
// as one message, while the event loop parses the next requests. The worker starts with the
// first check; until it is up, and for good if it fails, checks run here instead: slower,
// never skipped.
import { Worker } from 'node:worker_threads';
import { verifyRaw } from './ed25519.ts';
import { packable, packJobs, type VerifyJob } from './verify-batch.ts';
import type { VerifyAnswer } from './verifier-worker.ts';

/** Resolves whether `signature` is `publicKey`'s signature over the UTF-8 bytes of `message`. */
export type Ed25519Verifier = (publicKey: Uint8Array, message: string, signature: Uint8Array) => Promise<boolean>;

/** Verifies on the calling thread. */
export const verifyHere: Ed25519Verifier = async (publicKey, message, signature) =>
  verifyRaw(publicKey, Buffer.from(message, 'utf8'), signature);

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

  private readyNow: () => void = () => undefined;
  private neverReady: (err: Error) => void = () => undefined;
  /** Resolves once checks go to the worker; rejects if it fails or is closed first (tests wait for it). */
  readonly whenReady: Promise<void> = new Promise((resolve, reject) => {
    this.readyNow = resolve;
    this.neverReady = reject;
  });

  constructor() {
    this.whenReady.catch(() => undefined); // nobody need wait for it
  }

  /** Starts the worker, which loads the TypeScript sources through tsx, resolved from this file. */
  private start(): void {
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./verifier-worker.ts', import.meta.url).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
    const worker = new Worker(bootstrap, { eval: true, execArgv: [] });
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
    const bytes = packJobs(jobs);
    this.worker.postMessage({ first: this.queuedFrom, bytes }, [bytes.buffer as ArrayBuffer]);
  }

  private answered({ first, results }: VerifyAnswer): void {
    results.forEach((result, i) => {
      const waiting = this.waiting.get(first + i);
      this.waiting.delete(first + i);
      waiting?.resolve(result === 1);
    });
  }

  /** Answers every job still out here, and every later one too. */
  private fail(): void {
    if (!this.ready) this.neverReady(new Error('the verifier thread stopped before it was ready; checks run on the event loop'));
    this.failed = true;
    this.queued = [];
    for (const { job, resolve } of this.waiting.values()) resolve(verifyRaw(job.publicKey, Buffer.from(job.message, 'utf8'), job.signature));
    this.waiting.clear();
  }
}
