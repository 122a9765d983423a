// The directory sub-port of an open store: its adapter over the same database.
import type { DirectoryStore } from './directory-port.ts';
import type { LedgerStore } from './port.ts';
import { PostgresDirectoryStore } from './postgres/directory.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteDirectoryStore } from './sqlite/directory.ts';
import { SqliteStore } from './sqlite/store.ts';

const adapters = new WeakMap<LedgerStore, DirectoryStore>();

export function directoryStoreOf(store: LedgerStore): DirectoryStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteDirectoryStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresDirectoryStore(store);
  else throw new Error('the directory needs the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
