// Group commit: requests that arrive in the same turn of the event loop are appended in one
// store transaction (one fsync), and each waits for that commit before it is answered. One
// batch is in flight at a time, so ids are assigned in commit order within a process.
import type { AppendOutcome, ChainPositioner, LedgerStore, PendingRecord } from '../store/port.ts';

type Waiting = { pending: PendingRecord; resolve: (o: AppendOutcome) => void; reject: (e: unknown) => void };

export class CommitQueue {
  private waiting: Waiting[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: LedgerStore,
    private readonly position: ChainPositioner,
    private readonly maxBatch = 256,
  ) {}

  append(pending: PendingRecord): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ pending, resolve, reject });
      if (!this.running) this.running = new Promise((done) => setImmediate(() => this.flush().finally(done)));
    });
  }

  /** Resolves once everything queued so far is committed or failed. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async flush(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      await this.commit(batch);
    }
    this.running = null;
  }

  private async commit(batch: Waiting[]): Promise<void> {
    try {
      const outcomes = await this.store.appendBatch(batch.map((w) => w.pending), this.position);
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (err) {
      // One bad request must not fail its neighbours: retry each alone; only the culprit fails.
      if (batch.length === 1) batch[0]!.reject(err);
      else for (const w of batch) await this.commit([w]);
    }
  }
}
