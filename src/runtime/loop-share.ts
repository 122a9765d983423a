// The event loop's share for public reads. A process has one event loop, and the record path and
// the public reads share it. When reads keep it busy all the time, a write that arrives queues
// behind whatever reads are ready to run, at every step of its way (parse, append, fsync, answer),
// so its latency grows without bound as the loop nears 100 % (the hostile benchmark measured it:
// bench/history/hostile.md). So a long read (a page of large records, a streamed export)
// waits for a turn between its slices: a turn is given at once while the loop was busy for less
// than `share` of the recent past (an average over about 100 ms); else, once it has cooled below
// (looked at every 10 ms), one turn per turn of the loop while it stays below, oldest first, and
// at the latest after `maxWaitMs`, so that no read starves. Reads then leave the loop idle often
// enough that a write finds it free, or waits for one slice. Writes never ask for a turn, and
// neither does the start of a read (a page's few small reads must not queue into the read gate's
// refusals). And reads are paced only while there are writes to make room for: a write seen in the
// last `writeWindowMs` (`writeSeen`, called as a write arrives). A reader alone, an export at night,
// runs at the loop's full speed; the first write to arrive waits at most for one slice.
// One pacer per thread (`readPacer`). A read thread's pacer keeps its reads to the same share of
// that thread's loop, and learns of the writes from the serving thread, through memory they
// share (`SharedPacing`): the reads' CPU, their garbage, their compression in the thread pool and the
// database's work for them then shrink while writes arrive, leaving the machine's cores to the
// record path, however low the read threads' priority already is.
// This folder imports nothing of the project, and anything may import it.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How often the loop's busy share is sampled while reads are waiting or recently asked. */
const TICK_MS = 10;
/** The time constant of the busy share's average. */
const AVERAGE_MS = 100;
/** The sampling stops after this long without a turn asked for. */
const IDLE_STOP_MS = 2_000;

export type LoopShareOptions = {
  /** Reads start while the loop was busy less than this share of the time (0 to 1; 1: never wait). */
  share: number;
  /** The longest a read waits for a turn. */
  maxWaitMs: number;
  /** Reads are paced while a write was seen this recently (Infinity: always paced). */
  writeWindowMs: number;
};

/**
 * A read waits at most a quarter of a second per turn: well inside the read gate's queue wait
 * (3 s), so the reads queued behind a paced one (a browser's few reads of one page) get their
 * turn rather than a 429.
 */
export const DEFAULT_LOOP_SHARE: LoopShareOptions = { share: 0.25, maxWaitMs: 250, writeWindowMs: 1_000 };

type Waiter = { resolve: () => void; since: number };

/** Microseconds on the wall clock, the same in every thread of the process. */
const wallMicros = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1_000));

/** The cells of SharedPacing's memory. */
const LAST_WRITE = 0;
const TURNS_WAITED = 1;

/**
 * What the serving thread's pacer and its read threads' pacers share, in memory all of them see:
 * when the last write arrived (the serving thread notes it), and the turns the reads waited for, in all.
 */
export class SharedPacing {
  private readonly cells: BigInt64Array;

  /** New memory, or (given another thread's `memory`) a view of that thread's. */
  constructor(readonly memory: SharedArrayBuffer = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.cells = new BigInt64Array(memory);
  }

  written(): void {
    Atomics.store(this.cells, LAST_WRITE, wallMicros());
  }

  /** Milliseconds since the last write (Infinity before the first). */
  sinceLastWrite(): number {
    const at = Atomics.load(this.cells, LAST_WRITE);
    return at === 0n ? Infinity : Number(wallMicros() - at) / 1_000;
  }

  waited(): void {
    Atomics.add(this.cells, TURNS_WAITED, 1n);
  }

  /** Turns that waited, in every thread that shares this memory. */
  get turnsWaited(): number {
    return Number(Atomics.load(this.cells, TURNS_WAITED));
  }
}

export class LoopShare {
  private options: LoopShareOptions;
  private busy = 0;
  private last: EventLoopUtilization | null = null;
  private lastAt = 0;
  private lastAsked = 0;
  private shared = new SharedPacing();
  private timer: NodeJS.Timeout | null = null;
  private readonly waiting: Waiter[] = [];
  private draining = false;
  /** Turns given at once, and turns that waited. */
  readonly stats = { immediate: 0, waited: 0 };

  constructor(options: LoopShareOptions = DEFAULT_LOOP_SHARE) {
    this.options = { ...options };
  }

  configure(options: LoopShareOptions): void {
    this.options = { ...options };
  }

  /** The busy share below which reads run (0 to 1). */
  get share(): number {
    return this.options.share;
  }

  /** The loop's busy share over the recent past, as last sampled (0 to 1). */
  get busyShare(): number {
    return this.busy;
  }

  /** A write arrived: reads make room for writes over the next `writeWindowMs`. */
  writeSeen(): void {
    this.shared.written();
  }

  /** The memory this pacer shares: the serving thread's, to give to its read threads. */
  get pacing(): SharedPacing {
    return this.shared;
  }

  /** Paces by the serving thread's writes and counts into its turns (a read thread's pacer). */
  join(pacing: SharedPacing): void {
    this.shared = pacing;
  }

  /** Reads waiting for a turn now. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /**
   * Resolves when this read may run its next slice: after a poll for I/O (so the writes that
   * arrived meanwhile go first) while the loop has room, else once it has.
   */
  turn(): Promise<void> {
    this.lastAsked = performance.now();
    this.sample();
    if (this.options.share >= 1 || !this.writesNear() || (this.busy < this.options.share && this.waiting.length === 0)) {
      this.stats.immediate++;
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise((resolve) => {
      this.waiting.push({ resolve, since: performance.now() });
      this.ensureTicking();
      this.timer!.ref(); // a waiting read keeps the process alive, as a sleeping one would
    });
  }

  /** Stops the sampling and gives every waiting read its turn (a closing process). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.waiting.splice(0)) w.resolve();
  }

  private ensureTicking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    this.sample();
    const now = performance.now();
    for (let w = this.waiting[0]; w && (now - w.since >= this.options.maxWaitMs || !this.writesNear()); w = this.waiting[0]) this.give();
    if (this.waiting.length > 0 && this.busy < this.options.share) this.drain();
    if (this.waiting.length === 0) this.timer?.unref();
    if (this.waiting.length === 0 && now - this.lastAsked > IDLE_STOP_MS && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      this.last = null;
      this.busy = 0;
    }
  }

  /**
   * While the loop stays below the share, one waiting read per turn of the loop, each after a
   * poll for I/O: the reads go as fast as the share allows, and every write that arrives runs
   * between two of them.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    const next = () => {
      this.sample();
      if (this.waiting.length === 0 || this.busy >= this.options.share) {
        this.draining = false;
        return;
      }
      this.give();
      setImmediate(next);
    };
    next();
  }

  private writesNear(): boolean {
    return this.options.writeWindowMs === Infinity || this.shared.sinceLastWrite() < this.options.writeWindowMs;
  }

  /** The oldest waiting read's turn. */
  private give(): void {
    const w = this.waiting.shift()!;
    this.stats.waited++;
    this.shared.waited();
    w.resolve();
  }

  /** Folds the loop's utilisation since the last sample into the average. */
  private sample(): void {
    const now = performance.now();
    if (!this.last) {
      this.last = performance.eventLoopUtilization();
      this.lastAt = now;
      this.ensureTicking();
      return;
    }
    const elapsed = now - this.lastAt;
    if (elapsed < 1) return;
    const current = performance.eventLoopUtilization();
    const recent = performance.eventLoopUtilization(current, this.last).utilization;
    const weight = 1 - Math.exp(-elapsed / AVERAGE_MS);
    this.busy += weight * (recent - this.busy);
    this.last = current;
    this.lastAt = now;
  }
}

/** The process's pacer of public reads (configured from LEDGER_READ_LOOP_SHARE where the app is built). */
export const readPacer = new LoopShare();

/** `lines`, each but the first read after a turn of the read pacer: a streamed body that yields to the writes. */
export async function* pacedLines<T>(lines: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = lines[Symbol.asyncIterator]();
  let done = false;
  try {
    for (let first = true; ; first = false) {
      if (!first) await readPacer.turn();
      const next = await iterator.next();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}
