// What a sub-port's SQLite adapter uses of the store it belongs to: its connection, its path and
// its off-loop writes (the WAL's fsync on the thread pool, resolved once durable). A type, so the
// store can build its sub-ports without an import cycle.
import type { SqliteDatabase } from './driver.ts';

export type SqliteHost = {
  readonly db: SqliteDatabase;
  readonly path: string;
  writeOffLoop<T>(write: () => T, durable?: boolean): Promise<T>;
  /** `work` in one IMMEDIATE transaction, committed as writeOffLoop commits. */
  writeTransaction<T>(work: () => T, durable?: boolean): Promise<T>;
};
