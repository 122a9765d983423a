// The broker sub-port of an open store: its adapter over the same database.
import type { BrokerStore } from './broker-port.ts';
import type { LedgerStore } from './port.ts';
import { PostgresBrokerStore } from './postgres/brokers.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteBrokerStore } from './sqlite/brokers.ts';
import { SqliteStore } from './sqlite/store.ts';

const adapters = new WeakMap<LedgerStore, BrokerStore>();

export function brokerStoreOf(store: LedgerStore): BrokerStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteBrokerStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresBrokerStore(store);
  else throw new Error('broker connections need the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
