// Runs a behavioural suite on every store: SQLite (a fresh file) and PostgreSQL (a fresh schema).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe } from 'node:test';
import pg from 'pg';
import type { MarketStore } from '../../src/market/port.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { testApp, type TestApp } from './app.ts';
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

/** Runs one statement on the store's own database, outside the service ($1... placeholders on both). */
export async function runSql(store: LedgerStore, statement: string, params: unknown[] = []): Promise<unknown[]> {
  if (store instanceof SqliteStore) {
    const s = store.db.prepare(statement.replace(/\$\d+/g, '?'));
    return s.reader ? s.all(...params) : (s.run(...params), []);
  }
  const client: pg.PoolClient = await (store as PostgresStore).pool.connect();
  try {
    return (await client.query(statement, params)).rows;
  } finally {
    client.release();
  }
}

export type MarketFixture = { store: LedgerStore; market: MarketStore; t: TestApp };

/** A fresh, migrated store of `kind`, its market sub-port and a test app on it: made before the suite's tests, closed after. */
export function marketFixture(kind: StoreKind): MarketFixture {
  const f = {} as MarketFixture;
  before(async () => {
    f.store = openStore(await kind.freshUrl());
    await f.store.migrate();
    f.market = f.store.market;
    f.t = await testApp(f.store);
  });
  after(async () => {
    await f.t.close();
    await f.store.close();
    await kind.cleanup();
  });
  return f;
}
