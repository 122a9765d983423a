// Hostile values from a broker (the third security probe): a symbol with NUL or a terminal escape, a
// dividend dated 9999-12-31, a split at a negative price are not recorded (skipped with a caveat
// naming the row); a symbol a spreadsheet would run as a formula is recorded as reported, with a
// caveat. Through a whole Alpaca sync against the simulator, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { accountWithActivities, nyPrefix, simUuid, startAlpacaSim, type AlpacaSim, type SimNonTrade } from '../sim/alpaca.ts';
import { forEachStore } from '../support/stores.ts';
import { brokerTestApp, connectAlpaca, type BrokerTestApp } from './wiring-support.ts';

const row = (n: number, fields: Partial<SimNonTrade>): SimNonTrade => ({
  id: `${nyPrefix('2026-01-20T15:00:00.000Z')}::${simUuid(n, 7)}`, created_at: '2026-01-20T15:00:00.000Z', status: 'executed',
  activity_type: 'DIV', activity_sub_type: 'CDIV', date: '2026-01-20', net_amount: '1', qty: '4', per_share_amount: '0.25', ...fields,
});

const HOSTILE = {
  nul: row(1, { symbol: 'XY\u0000Z' }),
  escape: row(2, { symbol: '\u001b[2J\u001b]0;pwned\u0007XYZ' }),
  c1: row(3, { symbol: '\u009b31mXYZ' }),
  bidi: row(4, { symbol: 'ZYX\u202e' }),
  future: row(5, { symbol: 'XYZ', date: '9999-12-31' }),
  negativeSplit: row(6, { activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', symbol: 'XYZ', qty: '-10', price: '-150', net_amount: '0' }),
};
const FORMULA = row(7, { symbol: '=HYPERLINK("x")' });
const FINE = row(8, { symbol: 'XYZ', date: '2026-02-03' });

await forEachStore('hostile broker values', (kind) => {
  let sim: AlpacaSim;
  let store: LedgerStore;
  let t: BrokerTestApp;

  before(async () => {
    const scenario = accountWithActivities({ interestRows: 0 });
    scenario.activities = [...(scenario.activities ?? []), ...Object.values(HOSTILE), FORMULA, FINE];
    const firstBuy = scenario.orders[0]!;
    firstBuy.symbol = '\u001b]8;;http://x\u0007XYZ';
    sim = await startAlpacaSim({ scenario });
    store = await kind.open();
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url }, '2026-02-03T12:00:00.000Z');
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  test('refused rows are skipped with a caveat naming each; the formula symbol is recorded with one; nothing else is touched', async () => {
    const owner = await t.agent();
    const id = await connectAlpaca(t, owner.secret, sim);
    const synced = await t.brokers.syncNow(id);
    assert.ok(synced.kind === 'synced', JSON.stringify(synced));
    const caveats = synced.summary.caveats;
    for (const [name, r] of Object.entries(HOSTILE)) {
      assert.ok(caveats.some((c) => c.code === 'activity_skipped' && c.message.startsWith(`activity ${r.id} was not recorded: `)), `${name}: ${JSON.stringify(caveats)}`);
    }
    assert.ok(caveats.some((c) => c.code === 'activity_skipped' && /dated 9999-12-31, after the sync's clock/.test(c.message)));
    assert.ok(caveats.some((c) => c.code === 'activity_skipped' && /price -150 is below 0/.test(c.message)));
    const fill = sim.scenario.fills.find((f) => f.order_id === sim.scenario.orders[0]!.id)!;
    assert.ok(caveats.some((c) => c.code === 'fill_skipped' && c.message.includes(fill.id) && /control character/.test(c.message)), JSON.stringify(caveats));
    assert.ok(caveats.some((c) => c.code === 'reported_symbol' && c.message.startsWith(`activity ${FORMULA.id}: `)));

    const recorded = (await store.listAgentRecords(owner.agentId, 'activity', { limit: 500 })).map((r) => JSON.parse(r.content) as { broker_activity_id: string; symbol: string | null });
    const ids = new Set(recorded.map((c) => c.broker_activity_id));
    for (const r of Object.values(HOSTILE)) assert.ok(!ids.has(r.id), `${r.id} was recorded`);
    assert.ok(ids.has(FORMULA.id) && ids.has(FINE.id));
    assert.equal(recorded.find((c) => c.broker_activity_id === FORMULA.id)!.symbol, FORMULA.symbol, 'recorded as reported');
    assert.equal(ids.size, (sim.scenario.activities ?? []).length - Object.keys(HOSTILE).length);
    const executions = await store.listAgentRecords(owner.agentId, 'execution', { limit: 500 });
    assert.equal(executions.length, sim.scenario.fills.length - 1);
  });
});
