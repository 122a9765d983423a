// The links the broker import made between executions and decisions (the fill index), as the
// public pages and the `verified` badge show them: how many of an agent's executions carry each
// link method, and the executions linked to each of a page of decisions. Read-only.
import type { LinkedExecutions } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import type { LinkCounts } from './port.ts';

export class ExecutionLinks {
  constructor(private readonly store: LedgerStore) {}

  counts(agentId: string): Promise<LinkCounts> {
    return this.store.brokers.linkCounts(agentId);
  }

  /** The executions linked to each of `decisionIds`, at most `perDecision` each (the oldest). */
  ofDecisions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions> {
    return this.store.site.linkedExecutions(decisionIds, perDecision);
  }
}
