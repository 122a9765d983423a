// Group commit: requests that arrive in the same turn of the event loop are appended in one
// store transaction (one fsync), and each waits for that commit to be durable before it is
// answered. A store whose transactions run one after another on one connection (SQLite) may
// have several batches in flight: the next batch commits while the previous one's fsync is
// still running, and ids stay in commit order. Other stores (PostgreSQL) take one at a time,
// so ids are assigned in commit order within a process there too.
import { StoreUnavailable, type LedgerStore } from '../store/port.ts';
import { appendRecords, type AppendOutcome, type AppendRequest } from './append.ts';
import type { Clock } from '../domain/clock.ts';

type Waiting = { request: AppendRequest; resolve: (o: AppendOutcome) => void; reject: (e: unknown) => void };

/** Told of each batch: its size, and the seconds from the store call to its durable commit (fsync included). */
export type CommitObserver = (size: number, seconds: number, ok: boolean) => void;

export class CommitQueue {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly store: LedgerStore,
    private readonly clock: Clock,
    private readonly maxBatch = 256,
    private readonly observe: CommitObserver | null = null,
  ) {}

  /** Requests waiting for a batch, and batches committing now. */
  get depth(): { waiting: number; inFlight: number } {
    return { waiting: this.waiting.length, inFlight: this.inFlight };
  }

  append(request: AppendRequest): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything queued so far is committed or failed. */
  drain(): Promise<void> {
    if (this.waiting.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Starts a batch on the next turn of the event loop, so that it gathers what arrives meanwhile. */
  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0 || this.inFlight >= this.store.maxBatchesInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    const batch = this.waiting.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.inFlight++;
    void this.commit(batch).finally(() => {
      this.inFlight--;
      this.schedule();
      if (this.waiting.length === 0 && this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
    this.schedule();
  }

  private async commit(batch: Waiting[]): Promise<void> {
    const started = this.observe ? performance.now() : 0;
    try {
      const outcomes = await appendRecords(this.store, batch.map((w) => w.request), this.clock);
      this.observe?.(batch.length, (performance.now() - started) / 1000, true);
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (err) {
      this.observe?.(batch.length, (performance.now() - started) / 1000, false);
      // One bad request must not fail its neighbours: retry each alone; only the culprit fails.
      // A database that cannot answer fails them all at once: retrying alone would only wait longer.
      if (batch.length === 1 || err instanceof StoreUnavailable) for (const w of batch) w.reject(err);
      else for (const w of batch) await this.commit([w]);
    }
  }
}
