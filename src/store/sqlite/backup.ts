// An online backup of a SQLite ledger (SQLite's backup API through better-sqlite3), safe while
// the service runs and writes. It reads on a connection of its own and copies every page in ONE
// step: one read transaction, so the copy is the database as of one commit, and WAL-mode writers
// are never blocked. (Stepping a few pages at a time would restart from the first page whenever
// another connection commits, and under steady writes might never finish.)
import { existsSync } from 'node:fs';
import Database from './driver.ts';

export type SqliteBackupResult = { pages: number; bytes: number; records: number; agents: number };

/** All remaining pages in one step (better-sqlite3 caps the rate at 2^31 - 1). */
const ALL_PAGES = 0x7fffffff;

export async function backupSqlite(source: string, destination: string): Promise<SqliteBackupResult> {
  if (!existsSync(source)) throw new Error(`no SQLite database at ${source}`);
  if (existsSync(destination)) throw new Error(`${destination} exists; a backup never overwrites a file`);
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const { totalPages } = await db.backup(destination, { progress: () => ALL_PAGES });
    const copy = new Database(destination, { readonly: true, fileMustExist: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the backup at ${destination} fails SQLite's quick_check: ${String(check)}`);
      const count = (table: string) => Number(copy.prepare(`SELECT count(*) FROM ${table}`).pluck().get());
      const pageSize = Number(copy.pragma('page_size', { simple: true }));
      return { pages: totalPages, bytes: totalPages * pageSize, records: count('records'), agents: count('agents') };
    } finally {
      copy.close();
    }
  } finally {
    db.close();
  }
}
