// Non-trade broker activities imported as `activity` records, on SQLite and PostgreSQL, against the
// Alpaca and SnapTrade simulators: each recorded once (sync twice; two syncs of the same account at
// once; killed between the append and the index; SnapTrade re-ingesting with new ids), a status
// change re-read in the trailing window recorded as a new fact, the traps kept as reported (a split
// as REMOVE and ADD rows, a withholding as its own row, a dividend without a symbol), the chain and
// the export verify, and the records show with provenance BROKER_SYNCED.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { alpacaActivities } from '../../src/brokers/activity.ts';
import { recordActivities } from '../../src/brokers/activity-import.ts';
import { verifyChain } from '../../src/core/verify.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { Computed } from '../../src/performance/types.ts';
import type { StoredRecord } from '../../src/domain/types.ts';
import type { BrokerStore } from '../../src/brokers/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { runVerify } from '../../src/verify/run.ts';
import { asChainRecord } from '../api/record-helpers.ts';
import { accountWithActivities, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { snapTradeAccountHistory, startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';
import { forEachStore } from '../support/stores.ts';
import { brokerTestApp, connectAlpaca, type BrokerTestApp } from './wiring-support.ts';

type ActivityContent = {
  broker: string; broker_activity_id: string; activity_type: string; activity_sub_type: string | null; status: string | null;
  symbol: string | null; quantity: string | null; price: string | null; per_share_amount: string | null; amount: string | null;
  currency: string | null; occurred_at: string; occurred_at_precision: string;
};

async function activities(store: LedgerStore, agentId: string): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  for (let before: string | undefined; ;) {
    const page = await store.listAgentRecords(agentId, 'activity', { limit: 500, before });
    out.push(...page);
    if (page.length < 500) return out;
    before = page[page.length - 1]!.id;
  }
}

const contentOf = (r: StoredRecord) => JSON.parse(r.content) as ActivityContent;
const h = (secret: string, json = false) => ({ authorization: `Bearer ${secret}`, ...(json ? { 'content-type': 'application/json' } : {}) });

async function verifyExport(t: BrokerTestApp, handle: string): Promise<void> {
  const exp = await t.app.inject({ method: 'GET', url: `/v1/export?agent=${handle}` });
  assert.equal(exp.statusCode, 200);
  const dir = mkdtempSync(join(tmpdir(), 'act-export-'));
  const file = join(dir, 'export.ndjson');
  writeFileSync(file, exp.body);
  const lines: string[] = [];
  const code = await runVerify(file, { workers: 0 }, (l) => lines.push(l));
  rmSync(dir, { recursive: true, force: true });
  assert.equal(code, 0, lines.join('\n'));
}

await forEachStore('broker activities imported as activity records', (kind) => {
  let alpaca: AlpacaSim;
  let snap: SnapTradeSim;
  let store: LedgerStore;
  let brokers: BrokerStore;
  let t: BrokerTestApp;

  before(async () => {
    alpaca = await startAlpacaSim({ scenario: accountWithActivities({ quirks: { prefixPaging: true } }) });
    snap = await startSnapTradeSim({ scenario: snapTradeAccountHistory() });
    store = await kind.open();
    brokers = store.brokers;
    const p = snap.scenario.partner;
    t = await brokerTestApp(store, {
      LEDGER_ALPACA_TRADING_URL: alpaca.url, LEDGER_SNAPTRADE_URL: snap.url, LEDGER_SNAPTRADE_CLIENT_ID: p.clientId, LEDGER_SNAPTRADE_CONSUMER_KEY: p.consumerKey,
    }, '2026-02-03T12:00:00.000Z');
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await alpaca?.close();
    await snap?.close();
    await kind.cleanup();
  });

  describe('Alpaca', () => {
    let owner: Awaited<ReturnType<BrokerTestApp['agent']>>;
    let id: string;
    const rows = () => alpaca.scenario.activities ?? [];

    before(async () => {
      owner = await t.agent();
      id = await connectAlpaca(t, owner.secret, alpaca);
    });

    test('a sync records every non-trade activity once, across pages; a second sync records nothing more', async () => {
      const first = await t.brokers.syncNow(id);
      assert.equal(first.kind, 'synced', JSON.stringify(first));
      assert.equal(first.kind === 'synced' && first.summary.counts.activities_recorded, rows().length);
      const second = await t.brokers.syncNow(id);
      assert.equal(second.kind, 'synced', JSON.stringify(second));
      assert.equal(second.kind === 'synced' && second.summary.counts.activities_recorded, 0);
      const recorded = (await activities(store, owner.agentId)).map(contentOf);
      assert.deepEqual(recorded.map((c) => c.broker_activity_id).sort(), rows().map((r) => r.id).sort(), 'every activity, each once');
      const counts = await store.countRecords(owner.agentId);
      assert.equal(counts.byType.activity, rows().length);
      assert.equal(counts.byType.execution, alpaca.scenario.fills.length);
      assert.equal(counts.total, rows().length + alpaca.scenario.fills.length);
    });

    test('the traps are kept as reported: split as REMOVE and ADD rows, withholding its own row, decimals normalised, dates as dates', async () => {
      const byType = (type: string) => (async () => (await activities(store, owner.agentId)).map(contentOf).filter((c) => c.activity_type === type))();
      const split = await byType('SPLIT');
      assert.deepEqual(split.map((c) => c.quantity).sort(), ['-10', '100']);
      assert.ok(split.every((c) => c.occurred_at === '2026-01-08' && c.occurred_at_precision === 'date' && c.amount === '0' && c.activity_sub_type === 'FSPLIT'),
        'dated the ex-date although booked the evening before');
      const [div] = await byType('DIV');
      assert.deepEqual({ amount: div!.amount, qty: div!.quantity, per: div!.per_share_amount, sub: div!.activity_sub_type, currency: div!.currency },
        { amount: '25', qty: '100', per: '0.25', sub: 'CDIV', currency: 'USD' });
      assert.equal((await byType('DIVNRA'))[0]!.amount, '-3.75');
      assert.equal((await byType('CSD'))[0]!.amount, '12000');
      assert.equal((await byType('CSW'))[0]!.amount, '-500');
      assert.equal((await byType('FEE'))[0]!.amount, '-0.02');
    });

    test('a status change re-read in the trailing window is a new fact, recorded once', async () => {
      const row = rows().find((r) => r.activity_type === 'INT')!;
      row.status = 'canceled';
      t.clock.set('2026-02-04T12:00:00.000Z');
      const third = await t.brokers.syncNow(id);
      assert.equal(third.kind === 'synced' && third.summary.counts.activities_recorded, 1, JSON.stringify(third));
      const fourth = await t.brokers.syncNow(id);
      assert.equal(fourth.kind === 'synced' && fourth.summary.counts.activities_recorded, 0);
      const facts = (await activities(store, owner.agentId)).map(contentOf).filter((c) => c.broker_activity_id === row.id);
      assert.deepEqual(facts.map((c) => c.status).sort(), ['canceled', 'executed']);
    });

    test('two syncs of the same account at once (two connections) record each activity once', async () => {
      const other = await t.agent();
      const a = await connectAlpaca(t, other.secret, alpaca);
      const b = await connectAlpaca(t, other.secret, alpaca);
      const [x, y] = await Promise.all([t.brokers.syncNow(a), t.brokers.syncNow(b)]);
      assert.equal(x.kind, 'synced', JSON.stringify(x));
      assert.equal(y.kind, 'synced', JSON.stringify(y));
      const ids = (await activities(store, other.agentId)).map((r) => `${contentOf(r).broker_activity_id}:${contentOf(r).status}`);
      assert.equal(new Set(ids).size, ids.length, 'no activity recorded twice');
      assert.equal(ids.length, rows().length);
    });

    test('killed between the append and the index: the rerun records nothing twice and repairs the index', async () => {
      const agent = await t.agent();
      const found = await store.findAgentById(agent.agentId);
      const { activities: list } = alpacaActivities({ accountRef: 'acct-killed', currency: 'USD', rows: rows().slice(0, 5) });
      const failing: BrokerStore = Object.assign(Object.create(brokers) as BrokerStore, {
        saveImportedActivities: async () => { throw new Error('killed'); },
      });
      await assert.rejects(recordActivities({ store, brokers: failing, clock: t.clock }, { agent: found!, connectionId: 'brk_x' }, list), /killed/);
      assert.equal((await activities(store, agent.agentId)).length, 5);
      const rerun = await recordActivities({ store, brokers, clock: t.clock }, { agent: found!, connectionId: 'brk_x' }, list);
      assert.deepEqual({ recorded: rerun.recorded, already: rerun.alreadyRecorded }, { recorded: 0, already: 5 });
      assert.equal((await activities(store, agent.agentId)).length, 5);
      const again = await recordActivities({ store, brokers, clock: t.clock }, { agent: found!, connectionId: 'brk_x' }, list);
      assert.equal(again.alreadyRecorded, 5, 'the index now knows them');
    });

    test('the broker report: the imported history is complete from a zero balance, so its curve is time-weighted and rule 7\'s caveat goes', async () => {
      const synthetic = new SyntheticMarketData('activities-test');
      const clock = { now: () => new Date('2026-02-10T12:00:00.000Z') };
      const performance = new PerformanceService({ store, market: store.market, reports: store.performance, provider: synthetic, synthetic, benchmark: 'SPY', clock, brokers });
      const r = await performance.report((await store.findAgentById(owner.agentId))!, 'broker');
      assert.ok(r.ok && r.value.status === 'computed', JSON.stringify(r));
      const report = (r.value as Computed).report;
      assert.equal(report.basis, 'time_weighted');
      assert.ok(!report.caveats.some((c) => c.code === 'trade_derived'), 'no trade-derived caveat');
      assert.match(report.caveats.find((c) => c.code === 'time_weighted')!.message, /from a zero balance before its first deposit \(2026-01-05\)/);
    });

    test('the chain verifies; activities show on /v1/ledger and the export with provenance BROKER_SYNCED; ledger verify passes', async () => {
      const chain = await store.listChain(owner.agentId, 0, 100_000);
      const verified = verifyChain({ agent: owner.handle, records: chain.map(asChainRecord) });
      assert.equal(verified.ok, true, JSON.stringify(verified.failures));
      assert.ok(chain.every((r) => r.type !== 'activity' || r.id.startsWith('act_')));
      const ledger = await t.app.inject({ method: 'GET', url: `/v1/ledger?type=activity&agent=${owner.handle}&limit=5` });
      assert.equal(ledger.statusCode, 200, ledger.body);
      const items = ledger.json().data;
      assert.equal(items.length, 5);
      for (const item of items) {
        assert.equal(item.entry.type, 'activity');
        assert.equal(item.provenance, 'BROKER_SYNCED');
        assert.equal(item.broker, 'alpaca');
      }
      const profile = await t.app.inject({ method: 'GET', url: `/v1/agents/${owner.handle}` });
      assert.equal(profile.statusCode, 200, profile.body);
      assert.equal(profile.json().counts.activity, rows().length + 1);
      await verifyExport(t, owner.handle);
      assert.deepEqual(alpaca.requests.filter((r) => r.stateChanging), []);
      assert.ok(!JSON.stringify(await activities(store, owner.agentId)).includes(String(alpaca.scenario.account.account_number)), 'never the account number');
    });
  });

  describe('SnapTrade', () => {
    test('every non-trade row recorded once; a re-ingest with new ids records nothing again; the export verifies', async () => {
      const a = await t.agent();
      const start = await t.app.inject({ method: 'POST', url: '/v1/brokers/snaptrade', headers: h(a.secret, true), payload: '{}' });
      assert.equal(start.statusCode, 201, start.body);
      const portal = await fetch(start.json().portal_url, { redirect: 'manual' });
      const back = new URL(portal.headers.get('location')!);
      const done = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
      assert.equal(done.statusCode, 200, done.body);
      await t.brokers.drain();
      const id = start.json().id as string;
      const nonTrade = snap.scenario.accounts[0]!.activities.filter((x) => x.type !== 'BUY' && x.type !== 'SELL');
      const recorded = (await activities(store, a.agentId)).map(contentOf);
      assert.equal(recorded.length, nonTrade.length, JSON.stringify(recorded.map((c) => c.activity_type)));
      const dividend = recorded.find((c) => c.activity_type === 'DIVIDEND')!;
      assert.deepEqual({ symbol: dividend.symbol, amount: dividend.amount, at: dividend.occurred_at, precision: dividend.occurred_at_precision, currency: dividend.currency },
        { symbol: null, amount: '25', at: '2026-01-09', precision: 'date', currency: 'USD' }, 'a dividend without a symbol is kept without one');
      assert.equal(recorded.find((c) => c.activity_type === 'SPLIT')!.quantity, '90');
      assert.equal(recorded.find((c) => c.activity_type === 'WITHDRAWAL')!.amount, '-500');
      assert.equal(recorded.find((c) => c.activity_type === 'CONTRIBUTION')!.amount, '12000');

      snap.reingest();
      const again = await t.brokers.syncNow(id);
      assert.equal(again.kind, 'synced', JSON.stringify(again));
      assert.equal(again.kind === 'synced' && again.summary.counts.activities_recorded, 0, 'new ids, same fingerprints: nothing recorded again');
      assert.equal((await activities(store, a.agentId)).length, nonTrade.length);
      await verifyExport(t, a.handle);
    });
  });
});
