// Opens the store named by a database URL: `sqlite:<path>` (or `sqlite::memory:`) or `postgres://...`.
import type { LedgerStore } from './port.ts';
import { SqliteStore } from './sqlite/store.ts';
import { PostgresStore, parsePostgresUrl } from './postgres/store.ts';

/**
 * `readPoolSize`: the PostgreSQL connections the public reads may hold (store/read-scope.ts);
 * `poolSize`: the others (the record path's, the jobs').
 */
export type OpenOptions = { readPoolSize?: number; poolSize?: number };

export function openStore(databaseUrl: string, options: OpenOptions = {}): LedgerStore {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return new PostgresStore({ ...parsePostgresUrl(databaseUrl), ...options });
  throw new Error(`unsupported database URL (expected sqlite:<path> or postgres://...): ${redactUrl(databaseUrl)}`);
}

/**
 * The store as a read thread opens it (src/read-thread.ts), beside the serving thread that opened
 * and migrated it: a SQLite connection that leaves the WAL's checkpoints to the serving thread's.
 */
export async function openForReads(databaseUrl: string, options: OpenOptions = {}): Promise<LedgerStore> {
  if (!databaseUrl.startsWith('sqlite:')) return openStore(databaseUrl, options);
  const store = new SqliteStore(databaseUrl.slice('sqlite:'.length), null);
  try {
    await store.attach();
    return store;
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * A PostgreSQL read replica of the primary, for the public reads. Never migrated (a standby is
 * read-only; the primary's migrations reach it by replication). SQLite has no replicas.
 */
export function openReadReplica(url: string, options: OpenOptions = {}): LedgerStore {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`a read replica must be a PostgreSQL URL (postgres://...), not ${redactUrl(url)}: SQLite has no replicas`);
  return new PostgresStore({ ...parsePostgresUrl(url), ...options });
}

/** A database URL fit for a log line or an error message: the password is never shown. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}
