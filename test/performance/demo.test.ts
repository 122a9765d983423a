// `ledger demo`'s use case on both stores: demo agents with a year of decisions recorded through the
// record path (chained, one agent signed), priced by the synthetic model, verifiable by `ledger
// verify`, with full synthetic profiles; one holds a symbol through a split and receives its
// dividends (the market facts kept as the pricing job keeps them, so nothing is restated); every
// demo agent passes `ledger verify --performance`; a second run creates nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { createDemo, demoHandles, type DemoAgent } from '../../src/cli/demo-agents.ts';
import { performanceOf } from '../../src/performance/service.ts';
import { verifyPerformance } from '../../src/verify/performance.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { verify } from '../cli/verify-fixture.ts';
import type { MarketStore } from '../../src/market/port.ts';
import { forEachStore } from '../support/stores.ts';

const NOW = new Date(Date.UTC(2026, 10, 20, 12, 0, 0));

await forEachStore('ledger demo', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  let ledger: LedgerApp;
  let created: DemoAgent[];
  const dir = mkdtempSync(join(tmpdir(), 'demo-test-'));
  const synthetic = new SyntheticMarketData('decision-ledger');

  before(async () => {
    store = await kind.open();
    market = store.market;
    const clock = { now: () => NOW };
    const performance = performanceOf(store, { provider: synthetic, seed: 'decision-ledger', benchmark: 'SPY', clock });
    ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock, checkSignature: signatureChecker(store) }, { performance }));
    const result = await createDemo({ store, market, synthetic, now: NOW }, { prefix: 'demo', days: 365 });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    created = result.value;
  });
  after(async () => {
    await ledger.close();
    await store.close();
    await kind.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the demo agents, flagged demo, with about a year of decisions ending before now', async () => {
    assert.deepEqual(created.map((a) => a.handle), demoHandles('demo'));
    for (const a of created) {
      const agent = await store.findAgentByHandle(a.handle);
      assert.equal(agent?.demo, true);
      assert.equal((await store.chainHead(a.agent_id)).seq, a.decisions);
      assert.ok(a.decisions >= (a.handle.endsWith('-income') ? 45 : 80), `${a.handle}: ${a.decisions}`);
      assert.ok(Date.parse(a.first_recorded_at) < NOW.getTime() - 360 * 86_400_000);
      assert.ok(Date.parse(a.last_recorded_at) < NOW.getTime());
    }
    assert.equal((await store.countRecords(created[0]!.agent_id)).signed, created[0]!.decisions, 'the momentum agent signs every decision');
  });

  it('prices every decision by the synthetic model at its recorded_at', async () => {
    for (const a of created) {
      const observations = await market.observationsOf(a.agent_id, 0, 10_000);
      assert.equal(observations.length, a.decisions);
      assert.ok(observations.every((o) => o.source === 'synthetic' && o.synthetic && o.status === 'priced'));
    }
  });

  it('the site agent page shows the performance the JSON profile has, not "not computed"', async () => {
    const handle = created[0]!.handle;
    const profile = (await ledger.app.inject({ method: 'GET', url: `/v1/agents/${handle}` })).json();
    assert.equal(profile.performance.model.status, 'computed');
    const page = await ledger.app.inject({ method: 'GET', url: `/agents/${handle}`, headers: { accept: 'text/html' } });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /No performance is computed/);
    for (const caveat of profile.caveats as { message: string }[]) {
      const escaped = caveat.message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
      assert.ok(page.body.includes(escaped), `the page shows the caveat: ${caveat.message}`);
    }
  });

  it('hides the demo agents from /v1/ledger by default', async () => {
    const page = (await ledger.app.inject({ method: 'GET', url: '/v1/ledger?limit=200' })).json();
    assert.equal(page.data.length, 0);
    const shown = (await ledger.app.inject({ method: 'GET', url: '/v1/ledger?limit=10&include_demo=true' })).json();
    assert.equal(shown.data.length, 10);
  });

  it('passes ledger verify, signatures included', async () => {
    for (const a of created) {
      const res = await ledger.app.inject({ method: 'GET', url: `/v1/export?agent=${a.handle}` });
      assert.equal(res.statusCode, 200);
      const file = join(dir, `${a.handle}.ndjson`);
      writeFileSync(file, res.body);
      const { code, out } = await verify(file);
      assert.equal(code, 0, out);
      assert.match(out, new RegExp(`verdict: PASS: ${a.decisions} records of ${a.handle}`));
      if (a.signed) assert.match(out, new RegExp(`ok   signature\\s+${a.decisions} checked, 0 failed`));
    }
  });

  it('gives full, synthetic profiles', async () => {
    for (const a of created) {
      const profile = (await ledger.app.inject({ method: 'GET', url: `/v1/agents/${a.handle}` })).json();
      assert.equal(profile.performance.model.status, 'computed', a.handle);
      assert.equal(profile.performance.model.synthetic, true);
      assert.notEqual(profile.performance.model.metrics.volatility.value, null, `${a.handle}: a year of daily returns`);
      assert.ok(profile.caveats.some((c: { code: string }) => c.code === 'synthetic_prices'));
      assert.ok(profile.caveats.some((c: { code: string }) => c.code === 'demo_agent'));
    }
  });

  it('the income agent holds a symbol through a split and receives its dividends; no demo agent is restated', async () => {
    for (const a of created) {
      const doc = (await ledger.app.inject({ method: 'GET', url: `/v1/agents/${a.handle}/performance` })).json();
      assert.equal(doc.method, 'perf_v2');
      assert.equal(doc.restatement, null, `${a.handle}: its actions were kept before its closes`);
      assert.ok(!doc.caveats.some((c: { code: string }) => c.code === 'restated'), a.handle);
    }
    const income = (await ledger.app.inject({ method: 'GET', url: '/v1/agents/demo-income/performance' })).json();
    const events = income.corporate_actions.events as Array<{ phase: string; type: string; symbol: string; quantity_before: string; quantity_after: string }>;
    const split = events.find((e) => e.type === 'forward_split');
    assert.ok(split, JSON.stringify(events));
    assert.ok(Number(split.quantity_after) > Number(split.quantity_before), 'the split multiplies the shares held');
    assert.ok(events.some((e) => e.type === 'cash_dividend' && e.phase === 'ex' && e.symbol === split.symbol));
    assert.ok(events.some((e) => e.type === 'cash_dividend' && e.phase === 'payable'), 'a dividend paid into cash');
    const page = await ledger.app.inject({ method: 'GET', url: '/agents/demo-income', headers: { accept: 'text/html' } });
    assert.match(page.body, /forward_split|split/i);
  });

  it('every demo agent passes ledger verify --performance', async () => {
    const base = await ledger.app.listen({ port: 0, host: '127.0.0.1' });
    for (const a of created) {
      const out: string[] = [];
      assert.equal(await verifyPerformance(`${base}/agents/${a.handle}`, (l) => out.push(l)), 0, out.join('\n'));
      assert.ok(out.some((l) => l.startsWith('ok   performance model')), out.join('\n'));
    }
  });

  it('a second run creates nothing and says which agents exist', async () => {
    const before = await store.listAgents();
    const again = await createDemo({ store, market, synthetic, now: NOW }, { prefix: 'demo', days: 365 });
    assert.equal(again.ok, false);
    assert.equal(!again.ok && again.error.code, 'demo_exists');
    assert.match(!again.ok ? again.error.message : '', /demo-momentum \(\d+ records\)/);
    assert.equal((await store.listAgents()).length, before.length);
  });
});
