// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
// crosses its threshold, on the committing thread, and waits there for two fsyncs: for the
// service that is the JavaScript thread, stalled for milliseconds every few hundred records.
// The writer connection therefore turns it off and this class checkpoints from a second
// connection on a worker thread instead:
//
// - every few hundred appended records (the policy), a PASSIVE checkpoint runs beside the writer (it
//   copies what is committed so far into the database file and never blocks a commit);
// - a WAL can only start over from its beginning when a transaction begins with every frame
//   copied, which steady writes may never allow; so once the WAL holds enough frames,
//   appends wait (the event loop does not) for one checkpoint with no commit beside it, after
//   which the next transaction restarts the WAL. Passive runs did most of the copying, so the
//   wait is short.
//
// If the worker fails, the writer connection gets SQLite's automatic checkpoint back: slower,
// never unsafe.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../runtime/worker.ts';
import type { CheckpointReply, CheckpointResult, CheckpointWorkerData } from './checkpoint-worker.js';
import { sqliteDriverPath } from './driver.ts';

export type CheckpointPolicy = {
  /** Appended records between passive checkpoints. */
  every: number;
  /** WAL frames (pages) at which appends wait for a drain. */
  drainAtFrames: number;
};

export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = { every: 256, drainAtFrames: 8192 };
/** SQLite's own default threshold, restored on the writer connection if the worker fails. */
const AUTOCHECKPOINT_PAGES = 1000;

export class Checkpointer {
  private worker: Worker | null = null;
  private running: Promise<CheckpointResult | null> | null = null;
  private appendedSinceStart = 0;
  private drainNeeded = false;
  private draining = false;
  private failed = false;
  /** Checkpoints finished so far, and how many of them were drains. */
  readonly stats = { runs: 0, drains: 0 };

  /** `restoreAutocheckpoint` gives the writer connection SQLite's own checkpoints back. */
  constructor(
    private readonly path: string,
    private readonly restoreAutocheckpoint: (pages: number) => void,
    private readonly policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
  ) {}

  /** False once the worker failed and SQLite's automatic checkpoint is back. */
  get active(): boolean {
    return !this.failed;
  }

  /** Before an append transaction: waits only while the WAL is being drained. */
  async beforeAppend(): Promise<void> {
    for (;;) {
      if (this.running && (this.draining || this.drainNeeded)) await this.running;
      else if (this.drainNeeded) await this.checkpoint(true);
      else return;
    }
  }

  /** After an append transaction committed `count` records. */
  afterAppend(count: number): void {
    this.appendedSinceStart += count;
    if (this.appendedSinceStart >= this.policy.every && !this.running && !this.drainNeeded && !this.failed) void this.checkpoint();
  }

  async close(): Promise<void> {
    await this.running;
    await this.worker?.terminate();
    this.worker = null;
  }

  /**
   * A drain has no commit beside it (appends wait for it), so it copies every frame unless a
   * reader still needs old ones; it is tried once per passive run that finds the WAL long, so
   * a long reader (an export in another process) slows appends but never stops them.
   */
  private checkpoint(drain = false): Promise<CheckpointResult | null> {
    this.appendedSinceStart = 0;
    if (drain) this.drainNeeded = false;
    this.draining = drain;
    const run = this.passive().then((result) => {
      if (result) {
        this.stats.runs++;
        if (drain) this.stats.drains++;
      }
      this.drainNeeded = !drain && result !== null && result.log >= this.policy.drainAtFrames && result.checkpointed < result.log;
      return result;
    }).finally(() => {
      this.running = null;
      this.draining = false;
    });
    this.running = run;
    return run;
  }

  /**
   * One PASSIVE checkpoint on the worker; null if it fails. A worker that fails or exits is given
   * up; a checkpoint SQLite refused (a full disk) is only skipped: the next one runs as usual.
   */
  private passive(): Promise<CheckpointResult | null> {
    return new Promise((resolve) => {
      const worker = this.start();
      const settle = (reply: CheckpointReply | null) => {
        worker.off('message', settle).off('error', fail).off('exit', fail);
        if (reply?.ok) return resolve(reply.result);
        if (reply === null) this.fail();
        resolve(null);
      };
      const fail = () => settle(null);
      worker.on('message', settle).on('error', fail).on('exit', fail);
      worker.postMessage('PASSIVE');
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const workerData: CheckpointWorkerData = { path: this.path, betterSqlite3: sqliteDriverPath() };
    this.worker = startWorker(new URL('./checkpoint-worker.js', import.meta.url), { workerData });
    this.worker.unref();
    return this.worker;
  }

  private fail(): void {
    this.failed = true;
    this.drainNeeded = false;
    this.restoreAutocheckpoint(AUTOCHECKPOINT_PAGES);
    void this.worker?.terminate();
    this.worker = null;
  }
}
