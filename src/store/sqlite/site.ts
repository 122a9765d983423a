// The site sub-port on SQLite: the same database file as the SqliteStore (its connection).
import { recordFromRow, type Row } from '../rows.ts';
import type { LinkedExecutions, SiteStore } from '../../site/port.ts';
import { linkedExecutionsSql } from '../site-rows.ts';
import type { SqliteStatement } from './driver.ts';
import type { SqliteHost } from './host.ts';

/** The decision ids as one JSON array (json_each), so one statement serves every page, prepared once. */
const LINKED_SQL = linkedExecutionsSql('SELECT value FROM json_each(?)', '?');

export class SqliteSiteStore implements SiteStore {
  private statement: SqliteStatement | null = null;

  constructor(private readonly store: SqliteHost) {}

  async linkedExecutions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions> {
    const ids = [...new Set(decisionIds)];
    const out: LinkedExecutions = { executions: [], totals: new Map() };
    if (ids.length === 0) return out;
    this.statement ??= this.store.db.prepare(LINKED_SQL);
    const rows = this.statement.all(JSON.stringify(ids), perDecision) as Row[];
    for (const r of rows) {
      out.executions.push({ decisionId: String(r.linked_decision), record: recordFromRow(r) });
      out.totals.set(String(r.linked_decision), Number(r.link_total));
    }
    return out;
  }
}
