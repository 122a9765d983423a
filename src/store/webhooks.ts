// The webhook sub-port of an open store: its adapter over the same database.
import type { LedgerStore } from './port.ts';
import { PostgresStore } from './postgres/store.ts';
import { PostgresWebhookStore } from './postgres/webhooks.ts';
import { SqliteStore } from './sqlite/store.ts';
import { SqliteWebhookStore } from './sqlite/webhooks.ts';
import type { WebhookStore } from './webhook-port.ts';

const adapters = new WeakMap<LedgerStore, WebhookStore>();

export function webhookStoreOf(store: LedgerStore): WebhookStore {
  let adapter = adapters.get(store);
  if (adapter) return adapter;
  if (store instanceof SqliteStore) adapter = new SqliteWebhookStore(store);
  else if (store instanceof PostgresStore) adapter = new PostgresWebhookStore(store);
  else throw new Error('webhooks need the SQLite or PostgreSQL store');
  adapters.set(store, adapter);
  return adapter;
}
