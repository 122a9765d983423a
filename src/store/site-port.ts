// The site sub-port: the few reads the public pages need beyond the public reads of port.ts,
// with a SQLite and a PostgreSQL adapter over the same database (site.ts picks it). Read-only.
import type { StoredRecord } from '../domain/types.ts';

/** An execution record linked to a decision, found through the broker import's link column. */
export type LinkedExecution = { decisionId: string; record: StoredRecord };

export type LinkedExecutions = {
  /** Per decision, oldest first, at most `perDecision`. */
  executions: LinkedExecution[];
  /** Per decision id, how many executions link to it in all. */
  totals: Map<string, number>;
};

export interface SiteStore {
  /** The executions linked to each of `decisionIds`, at most `perDecision` each (the oldest). */
  linkedExecutions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions>;
}

/** One SQL text for both dialects; `list` is the placeholder(s) of the decision ids, `cap` that of perDecision. */
export function linkedExecutionsSql(list: string, cap: string): string {
  return `SELECT * FROM (
      SELECT f.decision_id AS linked_decision,
        ROW_NUMBER() OVER (PARTITION BY f.decision_id ORDER BY r.sort_key) AS link_n,
        COUNT(*) OVER (PARTITION BY f.decision_id) AS link_total,
        r.id, r.agent_id, a.handle, r.type, r.chain_seq, r.recorded_at, r.symbol, r.content,
        r.content_hash, r.prev_hash, r.chain_hash, r.signature, r.link_token, r.sort_key
      FROM broker_fills f JOIN records r ON r.id = f.record_id JOIN agents a ON a.id = r.agent_id
      WHERE f.decision_id IN (${list})
    ) linked WHERE link_n <= ${cap} ORDER BY linked_decision, sort_key`;
}
