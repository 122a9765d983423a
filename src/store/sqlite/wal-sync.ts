// Durable commits without blocking the event loop. With synchronous=FULL, SQLite fsyncs the WAL
// inside COMMIT, on the JavaScript thread, so nothing else runs for the length of the fsync.
// Appends instead commit with synchronous=NORMAL (the WAL is written but not yet synced) and are
// acknowledged only after this fsync of the WAL file, which runs on libuv's thread pool: the same
// guarantee for every acknowledged record as FULL, while the next requests are parsed meanwhile.
// NORMAL still syncs the WAL before and the database after every checkpoint.
import { open, type FileHandle } from 'node:fs/promises';
import { statSync } from 'node:fs';

export class WalSync {
  private handle: FileHandle | null = null;
  private inode = -1;

  constructor(private readonly walPath: string) {}

  /** Flushes everything committed to the WAL so far to stable storage. */
  async sync(): Promise<void> {
    const current = statSync(this.walPath, { throwIfNoEntry: false });
    if (!current) throw new Error(`the write-ahead log ${this.walPath} is missing`);
    if (!this.handle || current.ino !== this.inode) {
      await this.handle?.close();
      this.handle = await open(this.walPath, 'r+');
      this.inode = current.ino;
    }
    await this.handle.sync();
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = null;
  }
}
