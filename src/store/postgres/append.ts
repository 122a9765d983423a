// The append on PostgreSQL in two round trips. Each is a script of statements sent as one simple
// query, which the server runs one statement after another, each with a snapshot of its own, as
// if they had been sent one at a time: (1) the facts: BEGIN, the heads locked, the idempotency
// keys, signing keys and nonces looked up, the append lock taken, the newest id read; (2) after
// the ledger planned the rows from them: the rows written and COMMIT. Every round trip is a
// wake-up of the serving thread that waits for a core when the machine is busy, so the append
// takes 2 of them instead of about 10. A simple query takes no parameters: every value is
// written into the script as a literal (`literal`), escaped, never a NUL.
// It owns the append's statements and their order.
import type pg from 'pg';
import type { StoredRecord } from '../../domain/types.ts';
import { agentValueKey, type AgentValue, type AppendFacts, type AppendQuestions, type AppendRows, type HeadFact } from '../port.ts';
import type { Row } from '../rows.ts';
import { sortKeyOf } from '../../core/chain.ts';

type Literal = string | number | null;

/** A value as an SQL literal: text as E'…' with quotes and backslashes escaped, integers as they are. */
export function literal(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer for an SQL literal: ${value}`);
    return String(value);
  }
  if (value.includes('\0')) throw new Error('a text value holds a NUL character, which PostgreSQL refuses');
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** `values` as an SQL array literal of `type` (text, bigint, int). */
function array(values: Literal[], type: 'text' | 'bigint' | 'int'): string {
  return `ARRAY[${values.map(literal).join(',')}]::${type}[]`;
}

const column = <T, V extends Literal>(rows: T[], type: 'text' | 'bigint' | 'int', f: (row: T) => V) => array(rows.map(f), type);

/** One lookup of the facts' script: which of `pairs` have a row in `table` where `condition` holds. */
type Lookup = { pairs: AgentValue[]; table: string; valueColumn: string; condition: string };

function lookupSql({ pairs, table, valueColumn, condition }: Lookup): string {
  return `SELECT agent_id, ${valueColumn} AS value FROM ${table} WHERE ${condition}
    AND (agent_id, ${valueColumn}) IN (SELECT * FROM unnest(${column(pairs, 'text', (p) => p.agentId)}, ${column(pairs, 'text', (p) => p.value)}))`;
}

const found = (rows: Row[]) => new Set(rows.map((r) => agentValueKey(String(r.agent_id), String(r.value))));

/**
 * Begins the transaction and reads the facts. The heads are locked first: a revoke or append of
 * these agents that committed before is seen by the lookups after. The append lock is taken
 * last, just before the newest id is read: the ids this batch draws from it must follow every
 * batch committed before and precede every batch committed after, and nothing before needs it.
 * No deadlock: a holder has all its row locks already and has written nothing a waiter could
 * wait for, and a waiter has written nothing yet.
 */
export async function beginAppend(c: pg.PoolClient, questions: AppendQuestions, lock: { timeoutMs: number; key: string }): Promise<AppendFacts> {
  const lookups: Record<'idempotency' | 'signing' | 'nonces', Lookup> = {
    idempotency: { pairs: questions.idempotencyKeys, table: 'idempotency_keys', valueColumn: 'key', condition: 'TRUE' },
    signing: { pairs: questions.signingKeyIds, table: 'signing_keys', valueColumn: 'id', condition: 'revoked_at IS NULL' },
    nonces: { pairs: questions.nonces, table: 'nonces', valueColumn: 'nonce', condition: 'TRUE' },
  };
  const asked = (['idempotency', 'signing', 'nonces'] as const).filter((k) => lookups[k].pairs.length > 0);
  const script = [
    'BEGIN',
    `SET LOCAL lock_timeout = ${literal(lock.timeoutMs)}`,
    `SELECT h.agent_id, h.seq, h.hash, h.recorded_at, a.status FROM chain_heads h JOIN agents a ON a.id = h.agent_id
     WHERE h.agent_id = ANY(${array(questions.agentIds, 'text')}) ORDER BY h.agent_id FOR UPDATE OF h`,
    ...asked.map((k) => lookupSql(lookups[k])),
    `SELECT pg_advisory_xact_lock(hashtext(${literal(lock.key)}))`,
    'SELECT sort_key FROM records ORDER BY sort_key DESC LIMIT 1',
  ];
  const results = await runScript(c, script);
  const [, , heads, ...afterHeads] = results;
  const answers = new Map(asked.map((k, i) => [k, found(afterHeads[i]!)]));
  const answer = (k: (typeof asked)[number]) => answers.get(k) ?? new Set<string>();
  const [newest] = results.at(-1)!;
  return {
    heads: headFacts(heads!),
    usedIdempotencyKeys: answer('idempotency'),
    usableSigningKeys: answer('signing'),
    usedNonces: answer('nonces'),
    newestSortKey: newest ? String(newest.sort_key) : null,
  };
}

function headFacts(rows: Row[]): Map<string, HeadFact> {
  return new Map(rows.map((r) => [String(r.agent_id), {
    seq: Number(r.seq), hash: String(r.hash), recordedAt: (r.recorded_at as string | null) ?? null, active: r.status === 'active',
  }]));
}

/** Writes the planned rows and commits. */
export async function commitAppend(c: pg.PoolClient, rows: AppendRows): Promise<void> {
  const script = rows.records.length === 0 ? [] : [
    insertRecordsSql(rows.records),
    ...(rows.idempotencyKeys.length > 0 ? [insertIdempotencyKeysSql(rows.idempotencyKeys)] : []),
    ...(rows.nonces.length > 0 ? [insertNoncesSql(rows.nonces)] : []),
    advanceHeadsSql(rows.heads),
  ];
  await runScript(c, [...script, 'COMMIT']);
}

function insertRecordsSql(records: StoredRecord[]): string {
  const text = (f: (r: StoredRecord) => string | null) => column(records, 'text', f);
  return `INSERT INTO records (id, sort_key, agent_id, type, chain_seq, recorded_at, symbol, content, content_hash, prev_hash,
      chain_hash, signature, link_token)
    SELECT * FROM unnest(${text((r) => r.id)}, ${text((r) => sortKeyOf(r.id))}, ${text((r) => r.agentId)}, ${text((r) => r.type)},
      ${column(records, 'bigint', (r) => r.chainSeq)}, ${text((r) => r.recordedAt)}, ${text((r) => r.symbol)}, ${text((r) => r.content)},
      ${text((r) => r.contentHash)}, ${text((r) => r.prevHash)}, ${text((r) => r.chainHash)},
      ${text((r) => (r.signature ? JSON.stringify(r.signature) : null))}, ${text((r) => r.linkToken)})`;
}

function insertIdempotencyKeysSql(keys: AppendRows['idempotencyKeys']): string {
  const text = (f: (k: AppendRows['idempotencyKeys'][number]) => string) => column(keys, 'text', f);
  return `INSERT INTO idempotency_keys (agent_id, key, fingerprint, record_id, status, body, created_at)
    SELECT agent_id, key, fingerprint, record_id, status, '', created_at
    FROM unnest(${text((k) => k.agentId)}, ${text((k) => k.key)}, ${text((k) => k.fingerprint)}, ${text((k) => k.recordId)},
      ${column(keys, 'int', (k) => k.status)}, ${text((k) => k.createdAt)}) AS v(agent_id, key, fingerprint, record_id, status, created_at)`;
}

function insertNoncesSql(nonces: AppendRows['nonces']): string {
  return `INSERT INTO nonces (agent_id, nonce, record_id)
    SELECT * FROM unnest(${column(nonces, 'text', (n) => n.agentId)}, ${column(nonces, 'text', (n) => n.nonce)}, ${column(nonces, 'text', (n) => n.recordId)})`;
}

function advanceHeadsSql(heads: AppendRows['heads']): string {
  const count = (f: (h: AppendRows['heads'][number]) => number) => column(heads, 'bigint', f);
  return `UPDATE chain_heads h SET seq = v.seq, hash = v.hash, recorded_at = v.recorded_at,
      decision_count = h.decision_count + v.decisions, execution_count = h.execution_count + v.executions,
      activity_count = h.activity_count + v.activities, signed_count = h.signed_count + v.signed
    FROM unnest(${column(heads, 'text', (h) => h.agentId)}, ${count((h) => h.seq)}, ${column(heads, 'text', (h) => h.hash)},
      ${column(heads, 'text', (h) => h.recordedAt)}, ${count((h) => h.added.decision)}, ${count((h) => h.added.execution)},
      ${count((h) => h.added.activity)}, ${count((h) => h.added.signed)})
      AS v(agent_id, seq, hash, recorded_at, decisions, executions, activities, signed)
    WHERE h.agent_id = v.agent_id`;
}

/** Runs the statements as one simple query; the rows of each, in order. */
async function runScript(c: pg.PoolClient, statements: string[]): Promise<Row[][]> {
  const result = (await c.query(statements.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
  return (Array.isArray(result) ? result : [result]).map((r) => r.rows as Row[]);
}
