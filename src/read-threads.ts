// The read threads: worker threads that answer the public reads (api/read-handoff.ts), each with
// its own app (read-thread.ts), its own connection to the store and its own heap, so a reader's
// rows, pages, JSON and compression never take the event loop the record path runs on. The
// serving thread still admits every read (rate limit, read gate) and moves the finished bytes.
// A thread's body comes in chunks, at most WINDOW ahead of what the socket took (backpressure
// across the threads). A thread that is starting or has failed takes no read: the read is
// answered on the serving thread, as without read threads; a failed thread is started again.
import type { OutgoingHttpHeaders } from 'node:http';
import type { Worker } from 'node:worker_threads';
import type { Config } from './config.ts';
import type { HandedAnswer, HandedRead, ReadHandoff } from './api/read-handoff.ts';
import { siblingModule, startWorker } from './runtime/worker.ts';

/** What the serving thread tells a read thread. */
export type ToReadThread =
  | { kind: 'read'; id: number; read: HandedRead }
  | { kind: 'taken'; id: number }
  | { kind: 'cancel'; id: number }
  | { kind: 'close' };

/** What a read thread tells the serving thread. */
export type FromReadThread =
  | { kind: 'ready' }
  | { kind: 'head'; id: number; status: number; headers: OutgoingHttpHeaders }
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  | { kind: 'end'; id: number }
  | { kind: 'fail'; id: number; message: string }
  | { kind: 'log'; level: 'warn' | 'error'; message: string };

/** What a read thread starts from. */
export type ReadThreadData = {
  config: Config;
  logVkey: string | null;
  /** The serving thread's pacing memory (runtime/loop-share.ts): the thread paces its reads while writes arrive. */
  pacing: SharedArrayBuffer;
};

/** Chunks a read thread may send ahead of the socket. */
export const WINDOW = 8;

const RESTART_AFTER_MS = [1_000, 5_000, 30_000] as const;

/**
 * A read thread's young generation. V8 sizes it (and the old generation) from the machine's
 * memory and keeps what it took; the reads' garbage is short-lived, so a small one costs little
 * collection time. With this and a 256 MB heap the hostile benchmark's peak RSS stays within its
 * goal, which V8's own sizing did not keep (bench/history/hostile.md).
 */
const YOUNG_GENERATION_MB = 16;

type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/**
 * `heapMb`: each thread's V8 old generation (a thread past it stops, and starts again); `entry`:
 * the thread's module (tests swap in one that fails).
 */
export type ReadThreadsOptions = { threads: number; heapMb: number; data: ReadThreadData; log: Log; entry?: URL };

export class ReadThreads implements ReadHandoff {
  private readonly threads: ReadThread[];
  private closed = false;

  constructor(options: ReadThreadsOptions) {
    this.threads = Array.from({ length: options.threads }, () => new ReadThread(options));
  }

  /**
   * Starts the threads; resolves when each is ready to answer or has failed, or after `waitMs`:
   * a thread slow to start (a loaded machine, a busy database) never holds up the service's start,
   * its reads are answered here until it is ready.
   */
  async start(waitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.all(this.threads.map((t) => t.start())), waited]);
    clearTimeout(timer);
  }

  /**
   * Threads configured and answering reads now; reads handed to them so far, reads they are
   * answering now, and body chunks waiting here for their sockets.
   */
  get state(): { threads: number; ready: number; answered: number; inFlight: number; buffered: number } {
    const sum = (f: (t: ReadThread) => number) => this.threads.reduce((n, t) => n + f(t), 0);
    return {
      threads: this.threads.length, ready: sum((t) => (t.isReady ? 1 : 0)),
      answered: sum((t) => t.answered), inFlight: sum((t) => t.inFlight), buffered: sum((t) => t.buffered),
    };
  }

  answer(read: HandedRead): Promise<HandedAnswer | null> {
    if (this.closed) return Promise.resolve(null);
    let best: ReadThread | null = null;
    for (const t of this.threads) if (t.isReady && (!best || t.inFlight < best.inFlight)) best = t;
    return best ? best.answer(read) : Promise.resolve(null);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.close()));
  }
}

/** A read's answer as it arrives from its thread: the head once, then chunks, then its end. */
type Pending = {
  head: (answer: HandedAnswer | null) => void;
  headed: boolean;
  chunks: Uint8Array[];
  ended: boolean;
  failure: Error | null;
  wake: (() => void) | null;
};

class ReadThread {
  private worker: Worker | null = null;
  private readyNow = false;
  private closing = false;
  private failures = 0;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private restartTimer: NodeJS.Timeout | null = null;
  /** Reads handed to this thread so far. */
  private taken = 0;

  constructor(private readonly options: ReadThreadsOptions) {}

  get answered(): number {
    return this.taken;
  }

  get isReady(): boolean {
    return this.readyNow;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get buffered(): number {
    let n = 0;
    for (const read of this.pending.values()) n += read.chunks.length;
    return n;
  }

  start(): Promise<void> {
    return new Promise((resolve) => {
      const worker = startWorker(this.options.entry ?? siblingModule('read-thread', import.meta.url), {
        workerData: this.options.data,
        resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      this.worker = worker;
      worker.on('message', (m: FromReadThread) => {
        if (m.kind === 'ready') {
          worker.unref(); // from now on, the serving thread's server keeps the process up, not its read threads
          this.readyNow = true;
          this.failures = 0;
          resolve();
        } else if (m.kind === 'log') this.options.log(m.level, `read thread: ${m.message}`);
        else this.received(m);
      });
      worker.on('error', (err) => this.options.log('error', `read thread failed: ${err.message}`));
      worker.on('exit', () => {
        this.stopped();
        resolve();
      });
    });
  }

  answer(read: HandedRead): Promise<HandedAnswer | null> {
    const id = this.nextId++;
    this.taken++;
    return new Promise((resolve) => {
      // A read's socket keeps the process up; one asked in-process (inject) has only the thread to wait for.
      if (this.pending.size === 0) this.worker?.ref();
      this.pending.set(id, { head: resolve, headed: false, chunks: [], ended: false, failure: null, wake: null });
      this.post({ kind: 'read', id, read });
    });
  }

  private received(m: Exclude<FromReadThread, { kind: 'ready' | 'log' }>): void {
    const read = this.pending.get(m.id);
    if (!read) return;
    if (m.kind === 'head') {
      read.headed = true;
      read.head({ status: m.status, headers: m.headers, body: this.body(m.id, read), cancel: () => this.cancel(m.id) });
      return;
    }
    if (m.kind === 'chunk') read.chunks.push(m.bytes);
    else if (m.kind === 'end') read.ended = true;
    else this.fail(m.id, read, new Error(m.message));
    read.wake?.();
  }

  private async *body(id: number, read: Pending): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const chunk = read.chunks.shift();
        if (chunk) {
          yield chunk;
          this.post({ kind: 'taken', id });
          continue;
        }
        if (read.failure) throw read.failure;
        if (read.ended) return;
        await new Promise<void>((wake) => (read.wake = wake));
        read.wake = null;
      }
    } finally {
      this.forget(id, read);
    }
  }

  /** A read that failed before its head is answered here; after it, its body ends in the error. */
  private fail(id: number, read: Pending, failure: Error): void {
    if (!read.headed) {
      this.settle(id);
      read.head(null);
      return;
    }
    read.failure = failure;
    read.wake?.();
  }

  /** The client went away: the thread stops sending, and a body waiting for its next chunk ends. */
  private cancel(id: number): void {
    const read = this.pending.get(id);
    if (!read) return;
    this.forget(id, read);
    read.ended = true;
    read.wake?.();
  }

  /** The read is done with here; a thread still sending it is told to stop. */
  private forget(id: number, read: Pending): void {
    if (!this.settle(id)) return;
    if (!read.ended && !read.failure) this.post({ kind: 'cancel', id });
  }

  private settle(id: number): boolean {
    const had = this.pending.delete(id);
    if (had && this.pending.size === 0 && this.readyNow) this.worker?.unref();
    return had;
  }

  private post(message: ToReadThread): void {
    this.worker?.postMessage(message);
  }

  /** The thread exited: its reads end (answered here, or cut), and it starts again unless closing. */
  private stopped(): void {
    this.readyNow = false;
    this.worker = null;
    for (const [id, read] of [...this.pending]) this.fail(id, read, new Error('the read thread stopped'));
    if (this.closing) return;
    const delay = RESTART_AFTER_MS[Math.min(this.failures++, RESTART_AFTER_MS.length - 1)]!;
    this.options.log('warn', `read thread stopped; public reads are answered on the serving thread until it starts again (in ${delay / 1000} s)`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.start();
    }, delay);
    this.restartTimer.unref();
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    // A thread still starting (the service starts them after it listens) has no read to finish:
    // it is stopped at once, so a stop soon after the start does not wait for its app to be built.
    if (!this.readyNow) void worker.terminate();
    this.post({ kind: 'close' });
    const timer = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
