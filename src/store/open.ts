// Opens the store named by a database URL: `sqlite:<path>` (or `sqlite::memory:`) or `postgres://...`.
import type { LedgerStore } from './port.ts';
import { SqliteStore } from './sqlite/store.ts';
import { PostgresStore, parsePostgresUrl } from './postgres/store.ts';

export function openStore(databaseUrl: string): LedgerStore {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return new PostgresStore(parsePostgresUrl(databaseUrl));
  throw new Error(`unsupported database URL (expected sqlite:<path> or postgres://...): ${redactUrl(databaseUrl)}`);
}

/**
 * A PostgreSQL read replica of the primary, for the public reads. Never migrated (a standby is
 * read-only; the primary's migrations reach it by replication). SQLite has no replicas.
 */
export function openReadReplica(url: string): LedgerStore {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`a read replica must be a PostgreSQL URL (postgres://...), not ${redactUrl(url)}: SQLite has no replicas`);
  return new PostgresStore(parsePostgresUrl(url));
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
