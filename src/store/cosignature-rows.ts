// Rows of log_cosignatures and log_witness_attempts to and from the port's types, shared by both adapters.
import type { StoredCosignature, WitnessAttempt } from '../log/port.ts';
import type { Row } from './rows.ts';

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function cosignatureFromRow(r: Row): StoredCosignature {
  return { treeSize: Number(r.tree_size), witness: String(r.witness), line: String(r.line), cosignedAt: Number(r.cosigned_at), receivedAt: String(r.received_at) };
}

export function attemptFromRow(r: Row): WitnessAttempt {
  return {
    witness: String(r.witness), lastAttemptAt: String(r.last_attempt_at), lastError: text(r.last_error), lastErrorAt: text(r.last_error_at),
    failures: Number(r.failures), nextAttemptAt: text(r.next_attempt_at),
  };
}

export const COSIGNATURE_COLUMNS = ['tree_size', 'witness', 'line', 'cosigned_at', 'received_at'];
export const cosignatureValues = (c: StoredCosignature): unknown[] => [c.treeSize, c.witness, c.line, c.cosignedAt, c.receivedAt];

export const ATTEMPT_COLUMNS = ['witness', 'last_attempt_at', 'last_error', 'last_error_at', 'failures', 'next_attempt_at'];
export const attemptValues = (a: WitnessAttempt): unknown[] => [a.witness, a.lastAttemptAt, a.lastError, a.lastErrorAt, a.failures, a.nextAttemptAt];

/** Each witness's cosignature of its largest tree size. */
export const LATEST_BY_WITNESS = `SELECT c.* FROM log_cosignatures c
  JOIN (SELECT witness, MAX(tree_size) AS tree_size FROM log_cosignatures GROUP BY witness) m ON m.witness = c.witness AND m.tree_size = c.tree_size
  ORDER BY c.witness`;

/** The upsert of a witness's attempt state; `p(i)` numbers the placeholders. */
export function upsertAttempt(p: (i: number) => string): string {
  const sets = ATTEMPT_COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ');
  return `INSERT INTO log_witness_attempts (${ATTEMPT_COLUMNS.join(', ')}) VALUES (${ATTEMPT_COLUMNS.map((_, i) => p(i + 1)).join(', ')})
    ON CONFLICT (witness) DO UPDATE SET ${sets}`;
}

export function insertCosignature(p: (i: number) => string): string {
  return `INSERT INTO log_cosignatures (${COSIGNATURE_COLUMNS.join(', ')}) VALUES (${COSIGNATURE_COLUMNS.map((_, i) => p(i + 1)).join(', ')})
    ON CONFLICT (tree_size, witness) DO NOTHING`;
}
