// The databases a benchmark writes to: a fresh SQLite file or a fresh PostgreSQL schema per
// target, what makes their commits durable, and the after-the-run check that every write the
// benchmark saw acknowledged is in the database.
import Database from '../src/store/sqlite/driver.ts';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { POSTGRES_URL, postgresProblem } from '../test/support/services.ts';

export type DurableCheck = {
  /** Records in the database after the server was killed. */
  records: number;
  /** Distinct record ids the benchmark received in 201 responses. */
  acked: number;
  /** How many of those ids are in the database. */
  found: number;
};

export type BenchDatabase = {
  kind: 'sqlite' | 'postgres';
  /** LEDGER_DATABASE_URL for the server under test. */
  url: string;
  check: (acked: Set<string>) => Promise<DurableCheck>;
  /** The settings that make a commit durable, read from the database. */
  durability: () => Promise<string>;
  /**
   * Settles the database after a bulk load and before a measurement: what the load left for the
   * database to do later (PostgreSQL's checkpoint of the written pages, autovacuum of the new rows;
   * SQLite's WAL) is done now, rather than landing in a measured phase at random. Answers what it did.
   */
  settle: () => Promise<string>;
  remove: () => Promise<void>;
};

export { postgresProblem };

export const storeName = (kind: BenchDatabase['kind']) => (kind === 'sqlite' ? 'SQLite' : 'PostgreSQL');

/** The environment of a service under test on `databaseUrl`: loopback, any port, no Redis or admin API, quiet logs. */
export function serviceEnv(databaseUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LEDGER_DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LEDGER_LOG_LEVEL: 'warn',
    LEDGER_BASE_URL: 'http://127.0.0.1/v1',
    LEDGER_SITE_URL: 'http://127.0.0.1',
    LEDGER_REDIS_URL: '',
    LEDGER_ADMIN_TOKEN: '',
    ...extra,
  };
}

export function freshSqlite(): BenchDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  const path = join(dir, 'ledger.db');
  return {
    kind: 'sqlite',
    url: `sqlite:${path}`,
    check: async (acked) => {
      const db = new Database(path, { readonly: true });
      try {
        const records = Number((db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n);
        const exists = db.prepare('SELECT 1 FROM records WHERE id = ?').pluck();
        let found = 0;
        for (const id of acked) if (exists.get(id) !== undefined) found++;
        return { records, acked: acked.size, found };
      } finally {
        db.close();
      }
    },
    durability: async () => {
      // journal_mode is kept in the file; synchronous belongs to a connection, so it is read on
      // one opened by SqliteStore, the adapter (and the settings) the server runs.
      const raw = new Database(path, { readonly: true });
      const journal = String(raw.pragma('journal_mode', { simple: true }));
      raw.close();
      const store = new SqliteStore(path);
      const synchronous = Number(store.db.pragma('synchronous', { simple: true }));
      await store.close();
      return `journal_mode=${journal}, synchronous=${synchronous}${synchronous === 2 ? ' (FULL)' : ''} on the adapter's connection`;
    },
    settle: async () => {
      const db = new Database(path);
      try {
        db.pragma('busy_timeout = 5000');
        db.pragma('wal_checkpoint(TRUNCATE)');
        return 'WAL checkpointed';
      } finally {
        db.close();
      }
    },
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function freshPostgres(): BenchDatabase {
  const schema = `bench_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const withClient = async <T>(work: (c: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    kind: 'postgres',
    url: `${POSTGRES_URL}?schema=${schema}`,
    check: (acked) => withClient(async (c) => {
      const count = async (sql: string, params: unknown[] = []) => Number((await c.query(sql, params)).rows[0].n);
      const records = await count(`SELECT count(*) AS n FROM ${schema}.records`);
      const found = await count(`SELECT count(*) AS n FROM ${schema}.records WHERE id = ANY($1::text[])`, [[...acked]]);
      return { records, acked: acked.size, found };
    }),
    durability: () => withClient(async (c) => {
      const show = async (name: string) => String((await c.query(`SHOW ${name}`)).rows[0][name]);
      return `fsync=${await show('fsync')}, synchronous_commit=${await show('synchronous_commit')}`;
    }),
    settle: () => withClient(async (c) => {
      const { rows } = await c.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1', [schema]);
      for (const { name } of rows) await c.query(`VACUUM (ANALYZE) ${schema}.${c.escapeIdentifier(name)}`);
      await c.query('CHECKPOINT');
      return `${rows.length} tables vacuumed and analysed, CHECKPOINT`;
    }),
    remove: () => withClient(async (c) => {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }),
  };
}

/** The stores a suite runs on: SQLite always, PostgreSQL when asked for and reachable (else a note says why not). */
export async function benchStores(postgres: boolean, notes: string[]): Promise<BenchDatabase['kind'][]> {
  const kinds: BenchDatabase['kind'][] = ['sqlite'];
  if (!postgres) return kinds;
  const problem = await postgresProblem();
  if (problem) notes.push(`PostgreSQL skipped: ${problem}`);
  else kinds.push('postgres');
  return kinds;
}
