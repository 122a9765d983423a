// Runs a behavioural suite on every store: SQLite (a fresh file) and PostgreSQL (a fresh schema).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

function sqliteKind(): StoreKind {
  const dirs: string[] = [];
  const freshUrl = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'));
    dirs.push(dir);
    return `sqlite:${join(dir, 'ledger.db')}`;
  };
  return {
    name: 'sqlite',
    freshUrl,
    open: async () => {
      const store = openStore(await freshUrl());
      await store.migrate();
      return store;
    },
    cleanup: async () => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresKind(): StoreKind {
  const urls: string[] = [];
  const freshUrl = async () => {
    const url = freshPostgresUrl();
    urls.push(url);
    return url;
  };
  return {
    name: 'postgres',
    freshUrl,
    open: async () => {
      const store = openStore(await freshUrl());
      await store.migrate();
      return store;
    },
    cleanup: async () => {
      for (const url of urls.splice(0)) await dropPostgresSchema(url);
    },
  };
}

/** describe(`${title} [sqlite]`) and describe(`${title} [postgres]`), the latter skipped (or failed under CI) without PostgreSQL. */
export async function forEachStore(title: string, suite: (kind: StoreKind) => void): Promise<void> {
  const pgSkip = await skipUnless('postgres');
  for (const kind of [sqliteKind(), postgresKind()]) {
    const skip = kind.name === 'postgres' ? pgSkip : false;
    describe(`${title} [${kind.name}]`, { skip }, () => suite(kind));
  }
}
