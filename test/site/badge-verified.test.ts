// The `verified` badge after a real broker sync (the Alpaca simulator), on SQLite and PostgreSQL:
// its linked share is the share of execution records whose hashed content says `link_token`,
// counted here from the records themselves, and its signed share is that of the decisions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { COLOURS } from '../../src/site/badge.ts';
import { BADGE_MEMO } from '../../src/site/badges.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { brokerTestApp, connectAlpaca, executions, type BrokerTestApp } from '../brokers/wiring-support.ts';
import { dayOfFills, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { forEachStore } from '../support/stores.ts';
import { parseSvg } from './svg.ts';

await forEachStore('the verified badge after a broker sync', (kind) => {
  let sim: AlpacaSim;
  let store: LedgerStore;
  let t: BrokerTestApp;
  before(async () => {
    sim = await startAlpacaSim({ scenario: dayOfFills() });
    store = await kind.open();
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  test('linked share = executions whose content links by link_token / all executions, rounded down', async () => {
    const owner = await t.agent();
    t.clock.set('2026-03-13T13:00:00.000Z');
    const aapl = await t.decide(owner.secret, { symbol: 'AAPL', action: 'BUY' });
    await t.decide(owner.secret, { symbol: 'SPY', action: 'INCREASE' });
    sim.scenario.orders.find((o) => o.symbol === 'AAPL' && o.parent === null && o.replaces === null)!.client_order_id = aapl.link_token;
    const id = await connectAlpaca(t, owner.secret, sim);
    const synced = await t.brokers.syncNow(id);
    assert.equal(synced.kind, 'synced', JSON.stringify(synced));

    const records = await executions(store, owner.agentId);
    const methods = records.map((r) => (JSON.parse(r.content) as { link: { method: string } | null }).link?.method ?? null);
    const byToken = methods.filter((m) => m === 'link_token').length;
    assert.ok(byToken > 0 && byToken < records.length, `a mix: ${byToken} of ${records.length} by link token`);
    assert.deepEqual(await store.brokers.linkCounts(owner.agentId),
      { link_token: byToken, inferred: methods.filter((m) => m === 'inferred').length }, 'the index agrees with the hashed content');

    t.clock.ms += BADGE_MEMO.ms + 1;
    const res = await t.app.inject({ method: 'GET', url: `/badge/${owner.handle}.svg?style=verified` });
    assert.equal(res.statusCode, 200);
    const svg = parseSvg(res.body);
    const linked = Math.floor((100 * byToken) / records.length);
    assert.equal(svg.label, `verified: linked ${linked}% · signed 0%`);
    assert.ok(svg.fills.includes(COLOURS.blue));
  });
});
