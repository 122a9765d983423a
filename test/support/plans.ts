// Query plans of what a request ran, on either store: every SELECT the store's database connection
// answered while a request was served is captured (statement text and parameters), explained by the
// store's planner, and each step that reads a table growing with the ledger is told apart as a seek
// (an index searched by a key), a walk an ORDER BY ... LIMIT stops (an index or rowid order read
// from one end), or a scan (every row read). PostgreSQL explains with enable_seqscan off: on a
// test's few rows its planner prefers sequential scans its costs would refuse on a large table, so
// a Seq Scan left in the plan is one no index could replace.
//
// PLAN_TEST_WITHOUT_INDEXES=1 explains every statement as if the growing tables had no index
// (SQLite: NOT INDEXED on each; PostgreSQL: index and bitmap scans off, sequential scans on): every
// read's test must then fail, which shows each one tells a scan from a seek.
import pg from 'pg';
import type { LedgerStore } from '../../src/store/port.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

/** Tables whose rows grow with the records (and the directory's headlines, with every projection). */
export const GROWING_TABLES = new Set([
  'records', 'nonces', 'idempotency_keys', 'log_leaves', 'log_tiles', 'log_checkpoints', 'log_anchors', 'log_cosignatures',
  'price_observations', 'priced_decisions', 'broker_fills', 'broker_activities', 'webhook_messages', 'agent_headlines',
]);

/** Tables that grow with the agents: a read of one agent (or of a page of records) seeks them too. */
export const AGENT_TABLES = new Set(['agents', 'chain_heads', 'signing_keys', 'api_keys']);

export type RanStatement = { sql: string; params: unknown[] };

const WITHOUT_INDEXES = process.env.PLAN_TEST_WITHOUT_INDEXES === '1';

let capturing: RanStatement[] | null = null;
const installed = new WeakSet<object>();

/** Makes the store's connections report each SELECT they answer to statementsOf (installed once per driver). */
export function watchStatements(store: LedgerStore): void {
  if (store instanceof SqliteStore) return watchSqlite(store);
  if (installed.has(pg.Client.prototype)) return;
  installed.add(pg.Client.prototype);
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: typeof query }).query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args as [string | { text?: string; values?: unknown[] }, unknown];
    if (typeof first === 'string') note(first, Array.isArray(second) ? second : []);
    else if (first?.text) note(first.text, first.values ?? []);
    return query.apply(this, args);
  };
}

function watchSqlite(store: SqliteStore): void {
  const statement = Object.getPrototypeOf(store.db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  if (installed.has(statement)) return;
  installed.add(statement);
  for (const method of ['all', 'get', 'iterate']) {
    const answer = statement[method]!;
    statement[method] = function (this: { source: string }, ...args: unknown[]) {
      note(this.source, args);
      return answer.apply(this, args);
    };
  }
}

function note(sql: string, params: unknown[]): void {
  if (capturing && /^\s*(SELECT|WITH)\b/i.test(sql)) capturing.push({ sql, params });
}

/** The SELECTs run while `work` ran (statements of background jobs at the same moment included). */
export async function statementsOf(work: () => Promise<unknown>): Promise<RanStatement[]> {
  const ran: RanStatement[] = [];
  capturing = ran;
  try {
    await work();
  } finally {
    capturing = null;
  }
  return ran;
}

/**
 * The steps of the statement's plan that read every row of one of the `growing` tables (empty: it
 * seeks, or walks in index order until a LIMIT ends it). A walk is judged by its shape: how many rows
 * a filter skips on the way is the data's (the ledger's demo agents, the directory's superseded
 * rows), which the read benchmark measures.
 */
export async function scansOf(store: LedgerStore, statement: RanStatement, growing: ReadonlySet<string>): Promise<string[]> {
  if (store instanceof SqliteStore) return sqliteScans(store, statement, growing);
  return postgresScans(store as PostgresStore, statement, growing);
}

// -------------------------------------------------------------------------------------------
// SQLite: EXPLAIN QUERY PLAN names each table by its alias; SEARCH is a seek, SCAN reads in
// table or index order and stops early only under a LIMIT whose order needs no sort of its own.

type SqliteStep = { id: number; parent: number; detail: string };

const NOT_ALIASES = new Set(['WHERE', 'JOIN', 'ON', 'ORDER', 'GROUP', 'LIMIT', 'LEFT', 'INNER', 'CROSS', 'USING', 'AS', 'NOT', 'INDEXED']);

/** alias (or table name) -> table name, from the FROM and JOIN clauses of `sql`. */
export function tableAliases(sql: string): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)(?:\s+(?:AS\s+)?([a-z_][a-z0-9_]*))?/gi)) {
    const table = m[1]!;
    aliases.set(table, table);
    if (m[2] && !NOT_ALIASES.has(m[2].toUpperCase())) aliases.set(m[2], table);
  }
  return aliases;
}

function sqliteScans(store: SqliteStore, { sql, params }: RanStatement, growing: ReadonlySet<string>): string[] {
  const planned = WITHOUT_INDEXES ? withoutIndexes(sql, growing) : sql;
  const steps = store.db.prepare(`EXPLAIN QUERY PLAN ${planned}`).all(...params) as SqliteStep[];
  return sqliteScansIn(steps, sql, growing);
}

/** `sql` with NOT INDEXED after each growing table it reads (and its alias). */
function withoutIndexes(sql: string, growing: ReadonlySet<string>): string {
  return sql.replace(/\b((?:FROM|JOIN)\s+([a-z_][a-z0-9_]*))(\s+(?:AS\s+)?([a-z_][a-z0-9_]*))?/gi, (whole, head: string, table: string, alias: string | undefined, name: string | undefined) => {
    if (!growing.has(table)) return whole;
    return name && !NOT_ALIASES.has(name.toUpperCase()) ? `${head}${alias} NOT INDEXED` : `${head} NOT INDEXED${alias ?? ''}`;
  });
}

/** The offending steps of a SQLite plan of `sql` on the `growing` tables. */
export function sqliteScansIn(steps: SqliteStep[], sql: string, growing: ReadonlySet<string>): string[] {
  const aliases = tableAliases(sql);
  const limited = /\bLIMIT\b/i.test(sql);
  const offends = (step: SqliteStep) => {
    const sorted = steps.some((s) => s.parent === step.parent && s.detail.startsWith('USE TEMP B-TREE FOR'));
    return !limited || sorted;
  };
  return steps.flatMap((step) => {
    const scanned = /^SCAN (\S+)/.exec(step.detail)?.[1];
    const table = scanned ? aliases.get(scanned) ?? scanned : undefined;
    return scanned && table && growing.has(table) && offends(step) ? [`${step.detail} (${table})`] : [];
  });
}

// -------------------------------------------------------------------------------------------
// PostgreSQL: a Seq Scan of a growing table is a scan, and so is a bitmap read of an index without
// an Index Cond (a bitmap is built whole); an index read without an Index Cond is a walk, allowed
// only below a Limit with no Sort or aggregate between them.

export type PlanNode = {
  'Node Type': string; 'Relation Name'?: string; 'Index Cond'?: string; 'Index Name'?: string; Plans?: PlanNode[];
};

async function postgresScans(store: PostgresStore, { sql, params }: RanStatement, growing: ReadonlySet<string>): Promise<string[]> {
  const client = await store.pool.connect();
  try {
    await client.query('BEGIN');
    const settings = WITHOUT_INDEXES ? ['enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan'] : ['enable_seqscan'];
    for (const setting of settings) await client.query(`SET LOCAL ${setting} = off`);
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    return postgresScansIn((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan, growing);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const STOPS_A_WALK = 'Limit';
const READS_ALL_BELOW = new Set(['Sort', 'Incremental Sort', 'Aggregate', 'Hash', 'WindowAgg', 'Materialize', 'Unique', 'SetOp']);

/** The offending nodes of a PostgreSQL plan on the `growing` tables. */
export function postgresScansIn(node: PlanNode, growing: ReadonlySet<string>, underLimit = false): string[] {
  const table = node['Relation Name'];
  const own = table && growing.has(table) ? offendingRead(node, table, underLimit) : [];
  const limitBelow = node['Node Type'] === STOPS_A_WALK || (underLimit && !READS_ALL_BELOW.has(node['Node Type']));
  return [...own, ...(node.Plans ?? []).flatMap((child) => postgresScansIn(child, growing, limitBelow))];
}

function offendingRead(node: PlanNode, table: string, underLimit: boolean): string[] {
  const type = node['Node Type'];
  if (type === 'Seq Scan') return [`Seq Scan on ${table}`];
  if (type === 'Bitmap Heap Scan' && unboundedBitmap(node)) return [`Bitmap Heap Scan on ${table} of a whole index`];
  const walk = /^Index (Only )?Scan$/.test(type) && !node['Index Cond'];
  if (walk && !underLimit) return [`${type} using ${node['Index Name']} on ${table}: no Index Cond and no Limit above`];
  return [];
}

/** Whether a bitmap under this node reads an index without an Index Cond, whole. */
function unboundedBitmap(node: PlanNode): boolean {
  if (node['Node Type'] === 'Bitmap Index Scan') return !node['Index Cond'];
  return (node.Plans ?? []).some(unboundedBitmap);
}
