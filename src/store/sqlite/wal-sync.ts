// Durable commits without blocking the event loop. With synchronous=FULL, SQLite fsyncs the WAL
// inside COMMIT, on the JavaScript thread, so nothing else runs for the length of the fsync.
// Appends instead commit with synchronous=NORMAL (the WAL is written but not yet synced) and are
// acknowledged only after this fsync of the WAL file, which runs on libuv's thread pool: the same
// guarantee for every acknowledged record as FULL, while the next requests are parsed meanwhile.
// NORMAL still syncs the WAL before and the database after every checkpoint.
//
// A failed fsync is final: on Linux a later fsync can succeed without the lost pages ever having
// reached the disk, so after one failure every append fails until the process restarts, and the
// store's ping fails too (/readyz answers 503: a load balancer stops sending writes here). The
// cause is told once, to the write whose sync failed; every refusal after it says only that.
import { open, type FileHandle } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { StoreUnavailable } from '../port.ts';

export class WalSync {
  private current: { inode: number; handle: Promise<FileHandle> } | null = null;
  /** Handles of a replaced WAL file; closed with the store, never under a running sync. */
  private readonly replaced: Promise<FileHandle>[] = [];
  private failure: Error | null = null;
  /** What every write is told after the failure (the cause went to the write whose sync failed). */
  private refusal: Error | null = null;
  /** fsyncs done and their time in seconds, for the metrics. */
  readonly stats = { syncs: 0, seconds: 0 };

  constructor(private readonly walPath: string) {}

  /** Throws once a sync has failed: nothing more may be committed on a disk that lost writes. */
  assertHealthy(): void {
    if (this.failure) throw this.refused();
  }

  private refused(): Error {
    return (this.refusal ??= new StoreUnavailable('writes are refused until restart: an fsync of the write-ahead log failed earlier', { cause: this.failure }));
  }

  /** Flushes everything committed to the WAL so far to stable storage. */
  async sync(): Promise<void> {
    this.assertHealthy();
    try {
      const handle = await this.handle();
      const started = performance.now();
      await handle.sync();
      this.stats.syncs++;
      this.stats.seconds += (performance.now() - started) / 1000;
    } catch (err) {
      if (this.failure) throw this.refused(); // a sync in flight beside the first failure
      this.failure = new StoreUnavailable(`fsync of the write-ahead log failed; refusing further writes until restart: ${(err as Error).message}`, { cause: err });
      throw this.failure;
    }
  }

  private handle(): Promise<FileHandle> {
    const stat = statSync(this.walPath, { throwIfNoEntry: false });
    if (!stat) throw new Error(`the write-ahead log ${this.walPath} is missing`);
    if (this.current?.inode !== stat.ino) {
      if (this.current) this.replaced.push(this.current.handle);
      this.current = { inode: stat.ino, handle: open(this.walPath, 'r+') };
    }
    return this.current.handle;
  }

  async close(): Promise<void> {
    const handles = [...this.replaced.splice(0), ...(this.current ? [this.current.handle] : [])];
    this.current = null;
    await Promise.all(handles.map(async (h) => (await h.catch(() => null))?.close()));
  }
}
