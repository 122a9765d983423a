// The market sub-port of an open store: its adapter over the same database.
import type { MarketStore } from './market-port.ts';
import type { LedgerStore } from './port.ts';
import { PostgresMarketStore } from './postgres/market.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteMarketStore } from './sqlite/market.ts';
import { SqliteStore } from './sqlite/store.ts';

const adapters = new WeakMap<LedgerStore, MarketStore>();

export function marketStoreOf(store: LedgerStore): MarketStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteMarketStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresMarketStore(store);
  else throw new Error('market data needs the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
