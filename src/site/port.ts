// The site wing's storage port: the few reads the public pages need beyond the public reads of
// store/port.ts, with a SQLite and a PostgreSQL adapter (store/{sqlite,postgres}/site.ts) over the
// same database. Read-only.
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
