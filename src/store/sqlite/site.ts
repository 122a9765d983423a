// The site sub-port on SQLite: the same database file as the SqliteStore (its connection).
import { recordFromRow, type Row } from '../rows.ts';
import type { LinkedExecutions, SiteStore } from '../../site/port.ts';
import { linkedExecutionsSql } from '../site-rows.ts';
import type { SqliteHost } from './host.ts';

export class SqliteSiteStore implements SiteStore {
  constructor(private readonly store: SqliteHost) {}

  async linkedExecutions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions> {
    const ids = [...new Set(decisionIds)];
    const out: LinkedExecutions = { executions: [], totals: new Map() };
    if (ids.length === 0) return out;
    const rows = this.store.db.prepare(linkedExecutionsSql(ids.map(() => '?').join(', '), '?')).all(...ids, perDecision) as Row[];
    for (const r of rows) {
      out.executions.push({ decisionId: String(r.linked_decision), record: recordFromRow(r) });
      out.totals.set(String(r.linked_decision), Number(r.link_total));
    }
    return out;
  }
}
