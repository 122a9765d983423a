// The site sub-port of an open store: its adapter over the same database.
import type { LedgerStore } from './port.ts';
import { PostgresSiteStore } from './postgres/site.ts';
import { PostgresStore } from './postgres/store.ts';
import type { SiteStore } from './site-port.ts';
import { SqliteSiteStore } from './sqlite/site.ts';
import { SqliteStore } from './sqlite/store.ts';

const adapters = new WeakMap<LedgerStore, SiteStore>();

export function siteStoreOf(store: LedgerStore): SiteStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteSiteStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresSiteStore(store);
  else throw new Error('the site needs the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
