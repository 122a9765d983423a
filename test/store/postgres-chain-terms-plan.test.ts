// chainTerms on PostgreSQL reads one observation per record of the page, whatever the planner's
// statistics say. A new agent writing fast has far more rows than the statistics taken while it had
// few; joined to its records, its observations were then scanned in full for each record of the
// page (20 to 45 ms a call in the hostile-reader benchmark, once the database had been analysed,
// every turn of the directory job). The test takes the statistics while the agent has one decision
// (autovacuum off on the tables, so they stay stale), records and observes more, and counts the rows
// of priced_decisions that EXPLAIN ANALYZE says the query read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { CHAIN_TERMS_SQL } from '../../src/store/postgres/market.ts';
import { observeDecisions } from '../support/observe.ts';
import { skipUnless } from '../support/services.ts';
import { marketFixture, postgresKind, runSql } from '../support/stores.ts';
import { appendRecord } from '../public/helpers.ts';

const OBSERVED = 300;
const TAIL = 10;

type PlanNode = { 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] };

/** Rows the plan read from `table`, over every loop of every node that scans it. */
function rowsRead(node: PlanNode, table: string): number {
  const own = node['Relation Name'] === table ? node['Actual Rows'] * node['Actual Loops'] : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, table), 0);
}

const DECISION = { symbol: 'AAPL', action: 'BUY', quantity: '1' };

describe('chainTerms\' plan on PostgreSQL with stale statistics', { skip: await skipUnless('postgres') }, () => {
  const f = marketFixture(postgresKind());
  const provider = new SyntheticMarketData('plan-test');

  test(`a page of the last ${TAIL} records reads at most two observations per record, not the agent's ${OBSERVED}`, async () => {
    const a = await f.t.agent();
    const record = async (n: number) => {
      for (let i = 0; i < n; i++) await appendRecord(f.t, a, 'decision', DECISION);
    };
    await record(1);
    await observeDecisions(f.store, f.market, provider, a.agentId);
    for (const table of ['records', 'priced_decisions']) {
      await runSql(f.store, `ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
      await runSql(f.store, `ANALYZE ${table}`);
    }
    await record(OBSERVED - 1);
    await observeDecisions(f.store, f.market, provider, a.agentId);
    await record(TAIL);

    const [row] = await runSql(f.store, `EXPLAIN (ANALYZE, FORMAT JSON) ${CHAIN_TERMS_SQL}`, [a.agentId, OBSERVED - TAIL, 2 * TAIL, 1 << 20]) as { 'QUERY PLAN': [{ Plan: PlanNode }] }[];
    const read = rowsRead(row!['QUERY PLAN'][0].Plan, 'priced_decisions');
    assert.ok(read <= 2 * 2 * TAIL, `priced_decisions rows read for a page of ${2 * TAIL} records: ${read}`);
    const terms = await f.market.chainTerms(a.agentId, OBSERVED - TAIL, 2 * TAIL, 1 << 20);
    assert.deepEqual(terms.map((t) => t.chainSeq), Array.from({ length: 2 * TAIL }, (_, i) => OBSERVED - TAIL + 1 + i));
    assert.deepEqual(terms.map((t) => t.observation === null), terms.map((t) => t.chainSeq > OBSERVED), 'the observed and the not yet observed, told apart');
  });
});
