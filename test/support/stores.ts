// Runs a behavioural suite on every store: SQLite (a fresh file) and PostgreSQL (a fresh schema).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { dropPostgresSchema, freshPostgresUrl, skipUnless } from './services.ts';

export type StoreKind = {
  name: 'sqlite' | 'postgres';
  /** A database URL for a fresh, empty, migrated store (call once per fixture). */
  freshUrl: () => Promise<string>;
  open: () => Promise<LedgerStore>;
  cleanup: () => Promise<void>;
};

/** A kind from how it makes one fresh database (returning its URL) and how it drops one. */
function storeKind(name: StoreKind['name'], makeFresh: () => string, drop: (url: string) => Promise<void>): StoreKind {
  const made: string[] = [];
  const freshUrl = async () => {
    const url = makeFresh();
    made.push(url);
    return url;
  };
  return {
    name,
    freshUrl,
    open: async () => {
      const store = openStore(await freshUrl());
      await store.migrate();
      return store;
    },
    cleanup: async () => {
      for (const url of made.splice(0)) await drop(url);
    },
  };
}

export const sqliteKind = () => storeKind(
  'sqlite',
  () => `sqlite:${join(mkdtempSync(join(tmpdir(), 'ledger-test-')), 'ledger.db')}`,
  async (url) => rmSync(dirname(url.slice('sqlite:'.length)), { recursive: true, force: true }),
);

export const postgresKind = () => storeKind('postgres', freshPostgresUrl, dropPostgresSchema);

/** describe(`${title} [sqlite]`) and describe(`${title} [postgres]`), the latter skipped (or failed under CI) without PostgreSQL. */
export async function forEachStore(title: string, suite: (kind: StoreKind) => void): Promise<void> {
  const pgSkip = await skipUnless('postgres');
  for (const kind of [sqliteKind(), postgresKind()]) {
    const skip = kind.name === 'postgres' ? pgSkip : false;
    describe(`${title} [${kind.name}]`, { skip }, () => suite(kind));
  }
}
