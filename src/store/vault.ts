// The vault sub-port of an open store: its adapter over the same database.
import type { LedgerStore } from './port.ts';
import { PostgresStore } from './postgres/store.ts';
import { PostgresVaultStore } from './postgres/vault.ts';
import { SqliteStore } from './sqlite/store.ts';
import { SqliteVaultStore } from './sqlite/vault.ts';
import type { VaultStore } from './vault-port.ts';

const adapters = new WeakMap<LedgerStore, VaultStore>();

export function vaultStoreOf(store: LedgerStore): VaultStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteVaultStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresVaultStore(store);
  else throw new Error('the credentials vault needs the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
