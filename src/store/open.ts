// Opens the store named by a database URL: `sqlite:<path>` (or `sqlite::memory:`) or `postgres://...`.
import type { LedgerStore } from './port.ts';
import { SqliteStore } from './sqlite/store.ts';
import { PostgresStore, parsePostgresUrl } from './postgres/store.ts';

/** `readPoolSize`: the PostgreSQL connections the public reads may hold (store/read-scope.ts). */
export type OpenOptions = { readPoolSize?: number };

export function openStore(databaseUrl: string, options: OpenOptions = {}): LedgerStore {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return new PostgresStore({ ...parsePostgresUrl(databaseUrl), ...options });
  throw new Error(`unsupported database URL (expected sqlite:<path> or postgres://...): ${redactUrl(databaseUrl)}`);
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
