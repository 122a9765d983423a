// The site sub-port on PostgreSQL: the same pool and schema as the PostgresStore.
import { recordFromRow, type Row } from '../rows.ts';
import type { LinkedExecutions, SiteStore } from '../../site/port.ts';
import { linkedExecutionsSql } from '../site-rows.ts';
import type { PostgresHost } from './pool.ts';

export class PostgresSiteStore implements SiteStore {
  constructor(private readonly store: PostgresHost) {}

  async linkedExecutions(decisionIds: readonly string[], perDecision: number): Promise<LinkedExecutions> {
    const ids = [...new Set(decisionIds)];
    const out: LinkedExecutions = { executions: [], totals: new Map() };
    if (ids.length === 0) return out;
    const rows = (await this.store.pool.query(linkedExecutionsSql('SELECT unnest($1::text[])', '$2'), [ids, perDecision])).rows as Row[];
    for (const r of rows) {
      out.executions.push({ decisionId: String(r.linked_decision), record: recordFromRow(r) });
      out.totals.set(String(r.linked_decision), Number(r.link_total));
    }
    return out;
  }
}
