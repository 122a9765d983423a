// Record counts kept on each agent's chain head (decision_count, execution_count, signed_count),
// updated in the append transaction, so profiles and the transparency page never count rows.
import type { RecordCounts, StoredRecord } from './port.ts';
import type { Row } from './rows.ts';

export type AddedCounts = { decision: number; execution: number; signed: number };

export const noneAdded = (): AddedCounts => ({ decision: 0, execution: 0, signed: 0 });

export function countAdded(added: AddedCounts, record: StoredRecord): void {
  added[record.type] += 1;
  if (record.signature) added.signed += 1;
}

/** The counts from `SELECT SUM(decision_count) AS decisions, SUM(execution_count) AS executions, SUM(signed_count) AS signed`. */
export function recordCountsFromSums(row: Row | undefined): RecordCounts {
  const decision = Number(row?.decisions ?? 0);
  const execution = Number(row?.executions ?? 0);
  return { total: decision + execution, signed: Number(row?.signed ?? 0), byType: { decision, execution } };
}

export const COUNT_SUMS =
  'SELECT SUM(decision_count) AS decisions, SUM(execution_count) AS executions, SUM(signed_count) AS signed FROM chain_heads';
