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
// - the WAL file is bounded in bytes too (large records fill it in few appends): a passive run also
//   starts once the WAL has grown by `everyBytes`; past `truncateAtBytes` the drain is a TRUNCATE
//   checkpoint, which also holds off other processes' writers (a drain alone cannot stop their
//   commits, so with two processes on one file the WAL could otherwise grow without end), copies
//   every frame and empties the file; and after a burst, once no append came for `idleMs`, a WAL
//   still larger than `everyBytes` is truncated the same way, so the file does not stay large.
//
// If the worker fails, the writer connection gets SQLite's automatic checkpoint back: slower,
// never unsafe.
import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../runtime/worker.ts';
import type { CheckpointReply, CheckpointResult, CheckpointWorkerData } from './checkpoint-worker.js';
import { sqliteDriverPath } from './driver.ts';

export type CheckpointPolicy = {
  /** Appended records between passive checkpoints. */
  every: number;
  /** WAL frames (pages) at which appends wait for a drain. */
  drainAtFrames: number;
  /** WAL growth in bytes that starts a passive checkpoint whatever the record count. */
  everyBytes: number;
  /** WAL size at which appends wait for a TRUNCATE checkpoint (the bound under bursts). */
  truncateAtBytes: number;
  /** Quiet time after the last append before a WAL larger than `everyBytes` is truncated. */
  idleMs: number;
};

/** The WAL's bounds, documented in docs/operations.md: 64 MiB under bursts, 16 MiB once quiet. */
export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = {
  every: 256, drainAtFrames: 8192, everyBytes: 16 * 1024 * 1024, truncateAtBytes: 64 * 1024 * 1024, idleMs: 1000,
};

type Mode = 'PASSIVE' | 'TRUNCATE';
/** SQLite's own default threshold, restored on the writer connection if the worker fails. */
const AUTOCHECKPOINT_PAGES = 1000;

export class Checkpointer {
  private worker: Worker | null = null;
  private running: Promise<CheckpointResult | null> | null = null;
  private appendedSinceStart = 0;
  private drainNeeded = false;
  private truncateNeeded = false;
  private draining = false;
  private failed = false;
  private walAtStart = 0;
  /** After a TRUNCATE a reader kept from finishing: not tried again before the WAL grows by everyBytes. */
  private truncateRetryAt = 0;
  private idle: NodeJS.Timeout | null = null;
  private readonly policy: CheckpointPolicy;
  /** Checkpoints finished so far, how many of them were drains, and how many truncated the WAL. */
  readonly stats = { runs: 0, drains: 0, truncates: 0 };

  /** `restoreAutocheckpoint` gives the writer connection SQLite's own checkpoints back. */
  constructor(
    private readonly path: string,
    private readonly restoreAutocheckpoint: (pages: number) => void,
    policy: Partial<CheckpointPolicy> = {},
  ) {
    this.policy = { ...DEFAULT_CHECKPOINT_POLICY, ...policy };
  }

  /** The WAL file's size in bytes now (0 when there is none). */
  walBytes(): number {
    return statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  }

  /** False once the worker failed and SQLite's automatic checkpoint is back. */
  get active(): boolean {
    return !this.failed;
  }

  /** Before an append transaction: waits only while the WAL is being drained. */
  async beforeAppend(): Promise<void> {
    for (;;) {
      const waitFor = this.drainNeeded || this.truncateNeeded;
      if (this.running && (this.draining || waitFor)) await this.running;
      else if (waitFor) await this.checkpoint(this.truncateNeeded ? 'TRUNCATE' : 'PASSIVE', true);
      else return;
    }
  }

  /** After an append transaction committed `count` records. */
  afterAppend(count: number): void {
    if (this.failed) return;
    this.appendedSinceStart += count;
    const wal = this.walBytes();
    if (wal >= Math.max(this.policy.truncateAtBytes, this.truncateRetryAt)) this.truncateNeeded = true;
    const due = this.appendedSinceStart >= this.policy.every || wal - this.walAtStart >= this.policy.everyBytes;
    if (due && !this.running && !this.drainNeeded && !this.truncateNeeded) void this.checkpoint('PASSIVE');
    this.armIdle();
  }

  /** Once appends stop for idleMs, a WAL left larger than everyBytes is emptied. */
  private armIdle(): void {
    if (this.idle) this.idle.refresh();
    else {
      this.idle = setTimeout(() => {
        this.idle = null;
        if (this.failed || this.walBytes() <= this.policy.everyBytes) return;
        if (this.running) return this.armIdle();
        void this.checkpoint('TRUNCATE', true).then((result) => {
          if (result && result.busy !== 0) this.armIdle(); // a reader held it: try again after another quiet spell
        });
      }, this.policy.idleMs);
      this.idle.unref();
    }
  }

  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    await this.running;
    await this.worker?.terminate();
    this.worker = null;
  }

  /**
   * A drain has no commit beside it (appends wait for it), so it copies every frame unless a
   * reader still needs old ones; it is tried once per passive run that finds the WAL long, so
   * a long reader (an export in another process) slows appends but never stops them.
   */
  private checkpoint(mode: Mode, drain = false): Promise<CheckpointResult | null> {
    this.appendedSinceStart = 0;
    this.walAtStart = this.walBytes();
    if (drain) this.drainNeeded = false;
    if (mode === 'TRUNCATE') this.truncateNeeded = false;
    this.draining = drain;
    const run = this.run(mode).then((result) => {
      if (result) {
        this.stats.runs++;
        if (drain) this.stats.drains++;
        if (mode === 'TRUNCATE' && result.busy === 0) this.stats.truncates++;
        if (mode === 'TRUNCATE') this.truncateRetryAt = result.busy === 0 ? 0 : this.walBytes() + this.policy.everyBytes;
      }
      this.drainNeeded = !drain && result !== null && result.log >= this.policy.drainAtFrames && result.checkpointed < result.log;
      this.walAtStart = Math.min(this.walAtStart, this.walBytes());
      return result;
    }).finally(() => {
      this.running = null;
      this.draining = false;
    });
    this.running = run;
    return run;
  }

  /**
   * One checkpoint on the worker; null if it fails. A worker that fails or exits is given up; a
   * checkpoint SQLite refused (a full disk) is only skipped: the next one runs as usual.
   */
  private run(mode: Mode): Promise<CheckpointResult | null> {
    return new Promise((resolve) => {
      const worker = this.thread();
      const settle = (reply: CheckpointReply | null) => {
        worker.off('message', settle).off('error', fail).off('exit', fail);
        if (reply?.ok) return resolve(reply.result);
        if (reply === null) this.fail();
        resolve(null);
      };
      const fail = () => settle(null);
      worker.on('message', settle).on('error', fail).on('exit', fail);
      worker.postMessage(mode);
    });
  }

  /**
   * Starts the thread now (the store does once migrated) rather than at the first checkpoint,
   * which would otherwise wait for it while appends grow the WAL.
   */
  start(): void {
    if (!this.failed) this.thread();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const workerData: CheckpointWorkerData = { path: this.path, betterSqlite3: sqliteDriverPath() };
    this.worker = startWorker(new URL('./checkpoint-worker.js', import.meta.url), { workerData });
    this.worker.unref();
    return this.worker;
  }

  private fail(): void {
    this.failed = true;
    this.drainNeeded = false;
    this.truncateNeeded = false;
    this.restoreAutocheckpoint(AUTOCHECKPOINT_PAGES);
    void this.worker?.terminate();
    this.worker = null;
  }
}
