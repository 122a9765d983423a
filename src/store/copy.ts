// Moving a ledger from SQLite to PostgreSQL (`ledger migrate --to postgres://...`): every row of
// every ledger table copied as it is (ids, hashes, timestamps, signatures, log tiles), in one
// PostgreSQL transaction, from one SQLite snapshot. Before it commits, each table is read back on
// both sides in primary-key order and digested: the copy commits only if every table has the
// same rows, value for value. A target that already holds ledger rows is refused.
//
// Generic by design: columns come from the SQLite table, and each value is converted by the
// PostgreSQL column's type (0/1 to boolean; BLOB to bytea as it is). A new table is one line in
// COPIED_TABLES (test/store/copy.test.ts fails for a SQLite table that is in neither list).
import { createHash } from 'node:crypto';
import pg from 'pg';
import Database, { type SqliteDatabase } from './sqlite/driver.ts';
import { SqliteStore } from './sqlite/store.ts';
import { PostgresStore, parsePostgresUrl } from './postgres/store.ts';

/**
 * The tables copied, parents before children (foreign keys). `seeded`: the migrations insert
 * its rows, which the copy replaces. `derived`: triggers fill it from the tables copied before
 * it, on both stores; it is not written, only compared.
 */
export const COPIED_TABLES: readonly { name: string; seeded?: true; derived?: true }[] = [
  { name: 'agents' },
  { name: 'api_keys' },
  { name: 'signing_keys' },
  { name: 'records' },
  { name: 'chain_heads' },
  { name: 'idempotency_keys' },
  { name: 'nonces' },
  { name: 'broker_connections' },
  { name: 'broker_users' },
  { name: 'broker_fills' },
  { name: 'broker_activities' },
  { name: 'broker_snapshots' },
  { name: 'master_key_checks' },
  { name: 'log_leaves' },
  { name: 'log_tiles' },
  { name: 'log_checkpoints' },
  { name: 'log_anchors' },
  { name: 'log_anchor_counts', derived: true },
  { name: 'log_anchor_state', seeded: true },
  { name: 'log_cosignatures' },
  { name: 'log_witness_attempts' },
  { name: 'price_observations' },
  { name: 'price_counts', derived: true },
  { name: 'priced_decisions', derived: true },
  { name: 'price_scan' },
  { name: 'market_closes' },
  { name: 'market_raw_closes' },
  { name: 'corporate_actions' },
  { name: 'market_actions_known' },
  { name: 'performance_reports' },
  { name: 'webhook_endpoints' },
  { name: 'webhook_cursor' },
  { name: 'webhook_anchors_seen' },
  { name: 'webhook_messages' },
  { name: 'webhook_attempts' },
];

/**
 * SQLite tables that are not ledger data: each store keeps its own. The directory's board is a
 * projection of the tables copied: the directory job on the target projects it anew.
 */
export const NOT_COPIED: readonly string[] = ['schema_migrations', 'agent_headlines', 'agent_headlines_board'];

export type CopyProgress = (table: string, copied: number, total: number) => void;
export type TableReport = { table: string; rows: number; digest: string };

export class CopyRefused extends Error {}

/** Rows per INSERT, and text/bytes per INSERT, whichever is reached first. */
const BATCH_ROWS = 1000;
const BATCH_BYTES = 4 * 1024 * 1024;
const PG_MAX_PARAMS = 65_535;

type Column = { name: string; pgType: string };
/** `identity`: a PostgreSQL identity column (SQLite's AUTOINCREMENT): copied as it is, its sequence moved past it. */
type Table = { name: string; seeded: boolean; derived: boolean; columns: Column[]; key: string[]; identity: string | null };

const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The SQLite tables of the ledger (what a coverage check compares with COPIED_TABLES). */
export function sqliteTables(db: SqliteDatabase): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]);
}

export async function copySqliteToPostgres(sqlitePath: string, postgresUrl: string, progress: CopyProgress = () => undefined): Promise<TableReport[]> {
  await migrated(new SqliteStore(sqlitePath));
  const target = new PostgresStore(parsePostgresUrl(postgresUrl));
  await migrated(target);
  const source = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  const client = new pg.Client({ connectionString: parsePostgresUrl(postgresUrl).connectionString, options: `-c search_path=${target.schema}` });
  await client.connect();
  try {
    checkCoverage(source);
    source.exec('BEGIN'); // one snapshot for the copy and the comparison
    await client.query('BEGIN');
    const tables = await describeTables(source, client);
    await refuseNonEmpty(client, tables);
    for (const table of tables) if (!table.derived) await copyTable(source, client, table, progress);
    const reports = await compare(source, client, tables);
    await client.query('COMMIT');
    return reports;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    if (source.inTransaction) source.exec('COMMIT');
    source.close();
    await client.end();
  }
}

async function migrated(store: SqliteStore | PostgresStore): Promise<void> {
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}

function checkCoverage(source: SqliteDatabase): void {
  const known = new Set([...COPIED_TABLES.map((t) => t.name), ...NOT_COPIED]);
  const missing = sqliteTables(source).filter((t) => !known.has(t));
  if (missing.length > 0) throw new CopyRefused(`the SQLite ledger has tables this copier does not know: ${missing.join(', ')} (add them to COPIED_TABLES in src/store/copy.ts)`);
}

async function describeTables(source: SqliteDatabase, client: pg.Client): Promise<Table[]> {
  const tables: Table[] = [];
  for (const { name, seeded, derived } of COPIED_TABLES) {
    const info = source.prepare(`SELECT name, pk FROM pragma_table_info(?)`).all(name) as { name: string; pk: number }[];
    const pgColumns = ((await client.query(
      'SELECT column_name, data_type, is_identity FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1', [name])).rows as { column_name: string; data_type: string; is_identity: string }[]);
    const identity = pgColumns.find((r) => r.is_identity === 'YES')?.column_name ?? null;
    const pgTypes = new Map(pgColumns.map((r) => [r.column_name, r.data_type]));
    if (pgTypes.size === 0) throw new CopyRefused(`the PostgreSQL schema has no table ${name}`);
    const columns = info.map((c) => {
      const pgType = pgTypes.get(c.name);
      if (pgType === undefined) throw new CopyRefused(`PostgreSQL's ${name} has no column ${c.name}, which SQLite's has`);
      return { name: c.name, pgType };
    });
    const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    if (key.length === 0) throw new CopyRefused(`${name} has no primary key to copy and compare it in order`);
    tables.push({ name, seeded: seeded === true, derived: derived === true, columns, key, identity });
  }
  return tables;
}

async function refuseNonEmpty(client: pg.Client, tables: Table[]): Promise<void> {
  const held: string[] = [];
  for (const table of tables) {
    if (table.seeded) continue;
    const { rows } = await client.query(`SELECT count(*) AS n FROM ${quoteId(table.name)}`);
    if (Number(rows[0].n) > 0) held.push(`${table.name} (${rows[0].n} rows)`);
  }
  if (held.length > 0) throw new CopyRefused(`the PostgreSQL target is not empty: ${held.join(', ')}; migrate into a new database or schema (?schema=<name>)`);
}

/** A SQLite value as PostgreSQL's column type wants it. */
function toPostgres(value: unknown, pgType: string): unknown {
  if (value === null || value === undefined) return null;
  if (pgType === 'boolean') return value !== 0 && value !== 0n;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

const sizeOf = (v: unknown) => (typeof v === 'string' ? v.length : Buffer.isBuffer(v) ? v.length : 8);

async function copyTable(source: SqliteDatabase, client: pg.Client, table: Table, progress: CopyProgress): Promise<void> {
  const total = Number(source.prepare(`SELECT count(*) FROM ${quoteId(table.name)}`).pluck().get());
  if (table.seeded) await client.query(`DELETE FROM ${quoteId(table.name)}`);
  const names = table.columns.map((c) => c.name);
  const maxRows = Math.min(BATCH_ROWS, Math.floor(PG_MAX_PARAMS / names.length));
  const select = source.prepare(`SELECT ${names.map(quoteId).join(', ')} FROM ${quoteId(table.name)} ORDER BY ${table.key.map(quoteId).join(', ')}`).raw();
  let batch: unknown[][] = [];
  let bytes = 0;
  let copied = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await insertRows(client, table, batch);
    copied += batch.length;
    batch = [];
    bytes = 0;
    progress(table.name, copied, total);
  };
  progress(table.name, 0, total);
  for (const row of select.iterate() as Iterable<unknown[]>) {
    batch.push(row.map((v, i) => toPostgres(v, table.columns[i]!.pgType)));
    bytes += row.reduce<number>((sum, v) => sum + sizeOf(v), 0);
    if (batch.length >= maxRows || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  if (table.identity !== null) {
    const column = quoteId(table.identity);
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), (SELECT max(${column}) FROM ${quoteId(table.name)})) WHERE EXISTS (SELECT 1 FROM ${quoteId(table.name)})`, [table.name, table.identity]);
  }
}

async function insertRows(client: pg.Client, table: Table, rows: unknown[][]): Promise<void> {
  const width = table.columns.length;
  const values = rows.map((_, r) => `(${table.columns.map((_c, i) => `$${r * width + i + 1}`).join(', ')})`).join(', ');
  const overriding = table.identity === null ? '' : ' OVERRIDING SYSTEM VALUE';
  await client.query(`INSERT INTO ${quoteId(table.name)} (${table.columns.map((c) => quoteId(c.name)).join(', ')})${overriding} VALUES ${values}`, rows.flat());
}

// ---------------------------------------------------------------------------------------------
// The comparison: each table read back on both sides in key order and digested value by value.

/** One value in a form both drivers agree on: bytes as hex, booleans and numbers as digits. */
function normal(value: unknown): string {
  if (value === null || value === undefined) return '\u0000null';
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `x${Buffer.from(value).toString('hex')}`;
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

async function digestRows(rows: Iterable<unknown[]> | AsyncIterable<unknown[]>): Promise<{ rows: number; digest: string }> {
  const hash = createHash('sha256');
  let count = 0;
  for await (const row of rows) {
    count++;
    hash.update(JSON.stringify(row.map(normal)));
    hash.update('\n');
  }
  return { rows: count, digest: hash.digest('hex') };
}

async function compare(source: SqliteDatabase, client: pg.Client, tables: Table[]): Promise<TableReport[]> {
  const reports: TableReport[] = [];
  for (const table of tables) {
    const names = table.columns.map((c) => c.name);
    const sqliteSide = await digestRows(source.prepare(`SELECT ${names.map(quoteId).join(', ')} FROM ${quoteId(table.name)} ORDER BY ${table.key.map(quoteId).join(', ')}`).raw().iterate() as Iterable<unknown[]>);
    // Text keys in byte order on PostgreSQL too (SQLite's BINARY collation), whatever the database's collation.
    const order = table.key.map((k) => {
      const type = table.columns.find((c) => c.name === k)!.pgType;
      return type === 'text' || type === 'character varying' ? `${quoteId(k)} COLLATE "C"` : quoteId(k);
    });
    const pgSide = await digestRows(pgRows(client, `SELECT ${names.map(quoteId).join(', ')} FROM ${quoteId(table.name)} ORDER BY ${order.join(', ')}`));
    if (sqliteSide.rows !== pgSide.rows || sqliteSide.digest !== pgSide.digest) {
      throw new Error(`${table.name} differs after the copy (SQLite ${sqliteSide.rows} rows ${sqliteSide.digest.slice(0, 12)}, PostgreSQL ${pgSide.rows} rows ${pgSide.digest.slice(0, 12)}); nothing was committed`);
    }
    reports.push({ table: table.name, ...sqliteSide });
  }
  return reports;
}

/** A query's rows as arrays, a cursor's worth at a time (a big table is never held whole). */
async function* pgRows(client: pg.Client, sql: string): AsyncGenerator<unknown[]> {
  const cursor = `copy_compare_${Math.random().toString(36).slice(2)}`;
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`);
  try {
    for (;;) {
      const { rows } = await client.query({ text: `FETCH 1000 FROM ${cursor}`, rowMode: 'array' });
      if (rows.length === 0) return;
      yield* rows as unknown[][];
    }
  } finally {
    await client.query(`CLOSE ${cursor}`);
  }
}
