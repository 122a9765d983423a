// The site wing's storage port: the few reads the public pages need beyond the public reads of
// store/port.ts, with a SQLite and a PostgreSQL adapter (store/{sqlite,postgres}/site.ts) over the
// same database. Read-only.
import type { LinkedExecutions } from '../domain/types.ts';

export type { LinkedExecution, LinkedExecutions } from '../domain/types.ts';

export interface SiteStore {
  /** The executions linked to each of `decisionIds`, at most `perDecision` each (the oldest). */
  linkedExecutions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions>;
}
