// The loop of a background job: one turn at a time, each answering how long to sleep before the
// next; the sleep is cut short by a wake (work arrived) or a stop. An error in a turn never ends
// the loop: the job's `failed` hook notes it and answers the wait before the next turn.
// A SingletonJob adds the hold of a job that one process at a time may run (on PostgreSQL a session
// advisory lock on a connection of its own): it is asked for before a turn, asked for again after
// `standbyMs` while another process has it, and taken anew when the held one is lost.
// This folder imports nothing of the project, and anything may import it.

export type LoopHooks = {
  /** One turn; answers the milliseconds to sleep before the next (0: at once, other work let in first). */
  turn: () => Promise<number>;
  /** Notes a turn's error (it must not throw); answers the milliseconds to sleep before the next turn. */
  failed: (err: Error) => number | Promise<number>;
};

/** One start of the loop; a loop started again after a stop is a new run, the old one ends. */
type Run = { stopped: boolean; done: Promise<void> };

export class JobLoop {
  private run: Run | null = null;
  private wakeSleep: (() => void) | null = null;

  constructor(private readonly hooks: LoopHooks) {}

  /** Starts the loop, its first turn after `firstDelayMs` (a wake cuts it short); a loop already running is left as it is. */
  start(firstDelayMs = 0): void {
    if (this.run && !this.run.stopped) return;
    const run: Run = { stopped: false, done: Promise.resolve() };
    this.run = run;
    run.done = this.loop(run, firstDelayMs);
  }

  /** True from a stop until the next start: a turn in flight may use it to stop early. */
  get stopping(): boolean {
    return this.run?.stopped ?? false;
  }

  /** Cuts the sleep in progress short; a wake during a turn is not remembered. */
  wake(): void {
    this.wakeSleep?.();
  }

  /** Stops taking turns and waits for the turn in flight: for all of it, or at most `waitMs`. */
  async halt(waitMs?: number): Promise<void> {
    const run = this.run;
    if (!run) return;
    run.stopped = true;
    this.wake();
    if (waitMs === undefined) return run.done;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([run.done, new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); })]);
    clearTimeout(timer);
  }

  private async loop(run: Run, firstDelayMs: number): Promise<void> {
    if (firstDelayMs > 0) await this.sleep(firstDelayMs);
    while (!run.stopped) {
      let waitMs: number;
      try {
        waitMs = await this.hooks.turn();
      } catch (err) {
        waitMs = await this.hooks.failed(asError(err));
      }
      if (run.stopped) break;
      if (waitMs > 0) await this.sleep(waitMs);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleep = done;
    });
  }
}

/** What a SingletonJob holds. `lost`, where the store can tell, is true once the hold is gone. */
export type Hold = { readonly lost?: boolean; release(): Promise<void> };

export type SingletonHooks<H extends Hold> = {
  /** Takes the hold, or answers null while another process has it. */
  take: () => Promise<H | null>;
  /** One turn with the hold; answers the milliseconds to sleep before the next. */
  turn: (hold: H) => Promise<number>;
  /** Wait before asking again for a hold another process has. */
  standbyMs: number;
  /** Notes a turn's error (with the hold still held); answers the wait before the next turn. */
  failed: (err: Error) => number | Promise<number>;
  /**
   * After an error the hold is given back and taken anew, so the next turn starts from what the
   * store says. `keep`: it is kept while not lost (work done under it stays valid).
   */
  onError?: 'release' | 'keep';
};

export class SingletonJob<H extends Hold> {
  private readonly loop: JobLoop;
  private current: H | null = null;

  constructor(private readonly hooks: SingletonHooks<H>) {
    this.loop = new JobLoop({ turn: () => this.turn(), failed: (err) => this.failed(err) });
  }

  /** The hold this process has now, if any. */
  get held(): H | null {
    return this.current;
  }

  get stopping(): boolean {
    return this.loop.stopping;
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  /** The hold, taken now when not held (for work done outside the loop); null while another has it. */
  async hold(): Promise<H | null> {
    if (this.current?.lost) await this.release();
    return (this.current ??= await this.hooks.take());
  }

  /** Stops taking turns and waits for the turn in flight (at most `waitMs`); the hold is kept. */
  halt(waitMs?: number): Promise<void> {
    return this.loop.halt(waitMs);
  }

  /** Gives the hold back. */
  async release(): Promise<void> {
    const hold = this.current;
    this.current = null;
    await hold?.release().catch(() => undefined);
  }

  /** halt, then release. */
  async stop(waitMs?: number): Promise<void> {
    await this.halt(waitMs);
    await this.release();
  }

  private async turn(): Promise<number> {
    const hold = await this.hold();
    return hold ? this.hooks.turn(hold) : this.hooks.standbyMs;
  }

  private async failed(err: Error): Promise<number> {
    const waitMs = await this.hooks.failed(err);
    if (this.hooks.onError !== 'keep') await this.release();
    return waitMs;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
