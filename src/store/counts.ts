// Record counts kept on each agent's chain head (decision_count, execution_count, activity_count, signed_count),
// updated in the append transaction, so profiles and the transparency page never count rows.
import type { RecordCounts } from '../domain/types.ts';
import type { Row } from './rows.ts';

/** The counts from COUNT_SUMS. */
export function recordCountsFromSums(row: Row | undefined): RecordCounts {
  const decision = Number(row?.decisions ?? 0);
  const execution = Number(row?.executions ?? 0);
  const activity = Number(row?.activities ?? 0);
  return { total: decision + execution + activity, signed: Number(row?.signed ?? 0), byType: { decision, execution, activity } };
}

export const COUNT_SUMS =
  'SELECT SUM(decision_count) AS decisions, SUM(execution_count) AS executions, SUM(activity_count) AS activities, SUM(signed_count) AS signed FROM chain_heads';
