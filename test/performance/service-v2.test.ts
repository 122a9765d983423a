// The performance use case with method perf_v2 on both stores: corporate actions stored as facts
// and read through storedActions, a late action (learned after a close it changes was stored)
// restating the stored report (computed again from scratch, to the figures a fresh computation
// gives), one learned after its ex-date but before any close it changes was stored restating
// nothing, the price-return benchmark on request, and a stored perf_v1 report computed again as perf_v2.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { PerformanceService, storedActions } from '../../src/performance/service.ts';
import type { CorporateActionFacts } from '../../src/market/port.ts';
import type { Computed } from '../../src/performance/types.ts';
import type { Agent } from '../../src/domain/types.ts';
import { headlineOf } from '../../src/performance/views.ts';
import { badgeText } from '../../src/site/badge.ts';
import { basisText } from '../../src/site/browser/performance.ts';
import { forEachStore } from '../support/stores.ts';
import { DAY, forgetting, performanceApp, recordYear, type PerformanceApp } from './fixtures.ts';

const computed = (r: Awaited<ReturnType<PerformanceService['report']>>): Computed => {
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  assert.equal(r.value.status, 'computed', JSON.stringify(r.value));
  return r.value as Computed;
};

await forEachStore('performance service, perf_v2', (kind) => {
  let app: PerformanceApp;
  let agent: Agent;
  const asked: string[][] = [];
  const v2 = (reports = app.reports) => new PerformanceService({
    store: app.store, market: app.market, reports, provider: app.provider, synthetic: app.provider, benchmark: 'SPY', clock: app.clock, method: 'perf_v2',
    corporateActions: async (source, symbols) => {
      assert.equal(source, 'synthetic', 'the actions of the agent\'s price source');
      asked.push(symbols);
      return storedActions(app.market, source, symbols);
    },
  });
  /** Stores an action as the pricing job would, learned now (the clock's instant). */
  const learn = (a: Omit<CorporateActionFacts, 'source' | 'record_date' | 'special' | 'raw'>) =>
    app.market.saveCorporateActions([{ ...a, source: 'synthetic', record_date: null, special: null, raw: JSON.stringify(a) }], app.clock.now().toISOString());

  before(async () => {
    app = await performanceApp(await kind.open(), new SyntheticMarketData('decision-ledger'));
    await recordYear(app, `v2-${kind.name}`, 60);
    agent = (await app.store.findAgentByHandle(`v2-${kind.name}`)) as Agent;
  });
  after(async () => {
    await app.ledger.close();
    await app.store.close();
    await kind.cleanup();
  });

  describe('corporate actions through the service', () => {
    it('a stored perf_v1 report is computed again as perf_v2', async () => {
      const v1Service = new PerformanceService({ store: app.store, market: app.market, reports: app.reports, provider: app.provider, synthetic: app.provider, benchmark: 'SPY', clock: app.clock, method: 'perf_v1' });
      const v1 = computed(await v1Service.report(agent, 'model'));
      assert.equal(v1.report.method, 'perf_v1');
      const r = computed(await v2().report(agent, 'model'));
      assert.equal(r.report.method, 'perf_v2');
      assert.equal(r.report.benchmark.basis, 'total_return');
      assert.deepEqual(r.report.corporate_actions?.events, []);
      assert.ok(asked.some((s) => s.includes('SPY') && s.includes('AAPL')), JSON.stringify(asked));
    });

    it('a split of a held symbol known in advance is applied; a dividend learned late restates from its ex-date, as from scratch', async () => {
      const service = v2();
      const first = computed(await service.report(agent, 'model'));
      const held = first.report.holdings.positions[0]!;
      const ex = first.report.series.at(-5)!.date;
      const now = app.clock.t;
      app.clock.t = Date.parse(ex) - 20 * DAY; // learned 20 days before its ex-date
      await learn({ provider_id: 'split-1', type: 'forward_split', symbol: held.symbol, ex_date: ex, payable_date: null, process_date: ex, old_rate: '1', new_rate: '2', rate: null });
      app.clock.t = now;
      // the report moves on a day later and meets the split dated where it is valued: computed again
      // from scratch; learned before its ex-date (seen_at), it is no restatement of a published figure
      app.clock.t += DAY;
      const split = computed(await service.report(agent, 'model'));
      assert.equal(split.report.restatement, null);
      const event = split.report.corporate_actions?.events.find((e) => e.provider_id === 'split-1');
      assert.ok(event, 'the split touched the largest holding');
      assert.equal(event.quantity_after, (Number(event.quantity_before) * 2).toString());

      await learn({ provider_id: 'div-1', type: 'cash_dividend', symbol: held.symbol, ex_date: ex, payable_date: split.report.as_of, process_date: null, old_rate: null, new_rate: null, rate: '0.5' });
      app.clock.t += DAY;
      const late = computed(await service.report(agent, 'model'));
      assert.deepEqual(late.report.restatement?.actions.map((a) => [a.provider_id, a.from, a.reason]), [['div-1', ex, 'late_action']]);
      const stored = late.report.restatement!.actions[0]!.close_stored_at;
      assert.ok(stored < late.report.restatement!.actions[0]!.seen_at && stored.slice(0, 10) > ex, 'the close of its ex-date was stored before it was learned');
      assert.ok(late.report.caveats.some((c) => c.code === 'restated'));
      const scratch = computed(await v2(forgetting(app.store.performance)).report(agent, 'model'));
      assert.deepEqual(late.report, scratch.report);
      const before = late.report.series.filter((r) => r.date < ex);
      assert.deepEqual(before, first.report.series.filter((r) => r.date < ex), 'nothing before the ex-date changes');
    });

    it('an action learned after its ex-date, before any close it changes was stored, restates nothing', async () => {
      const service = v2();
      const first = computed(await service.report(agent, 'model'));
      const held = first.report.holdings.positions.at(-1)!;
      // the next weekday after as_of: no close of it is stored yet; learned the day after it
      let ex = Date.parse(first.report.as_of!) + DAY;
      while ([0, 6].includes(new Date(ex).getUTCDay())) ex += DAY;
      const exDate = new Date(ex).toISOString().slice(0, 10);
      app.clock.t = Math.max(app.clock.t, ex + DAY + 8 * 3600_000);
      await learn({ provider_id: 'div-2', type: 'cash_dividend', symbol: held.symbol, ex_date: exDate, payable_date: exDate, process_date: null, old_rate: null, new_rate: null, rate: '0.25' });
      const r = computed(await service.report(agent, 'model'));
      const event = r.report.corporate_actions?.events.find((e) => e.provider_id === 'div-2' && e.phase === 'ex');
      assert.ok(event, `the dividend of ${exDate} is applied`);
      assert.deepEqual(r.report.restatement?.actions.filter((a) => a.provider_id === 'div-2') ?? [], [], 'learned before a close it changes was stored: not restated');
      assert.deepEqual(r.report, computed(await v2(forgetting(app.store.performance)).report(agent, 'model')).report, 'as from scratch');
    });

    it('answers the price-return benchmark on request, from the same state', async () => {
      const service = v2();
      const total = computed(await service.report(agent, 'model'));
      const price = computed(await service.report(agent, 'model', { benchmark_return: 'price' }));
      assert.equal(price.report.benchmark.basis, 'price_return');
      assert.ok(price.report.caveats.some((c) => c.code === 'benchmark_price_return'));
      assert.deepEqual(price.report.series.map((r) => r.value), total.report.series.map((r) => r.value));
    });
  });

  // Issue 39, scope 3: a report computed from scratch each time, told what the store kept of the days asked about.
  describe('labels follow what the service knew of the corporate actions', () => {
    const labelled = () => new PerformanceService({
      store: app.store, market: app.market, reports: forgetting(app.reports), provider: app.provider, synthetic: app.provider, benchmark: 'SPY', clock: app.clock, method: 'perf_v2',
      corporateActions: (source, symbols) => storedActions(app.market, source, symbols),
      actionsKnown: (source, symbols) => app.market.actionsKnown(source, symbols),
    });
    const codes = (c: Computed) => c.report.caveats.map((x) => x.code);
    let inception: string;
    let asOf: string;
    let held: string[];

    it('none asked about: a partial return, not a total one; the holdings\' actions said missing; the badge and the page say so', async () => {
      const r = computed(await labelled().report(agent, 'model'));
      inception = r.report.inception!.slice(0, 10);
      asOf = r.report.as_of!;
      held = r.report.corporate_actions!.missing!.map((m) => m.symbol);
      assert.equal(r.report.benchmark.basis, 'partial_return');
      assert.equal(r.report.benchmark.missing?.symbol, 'SPY');
      assert.equal(r.report.benchmark.missing?.known, null);
      assert.ok(codes(r).includes('benchmark_actions_missing') && !codes(r).includes('benchmark_total_return'), codes(r).join());
      assert.ok(codes(r).includes('corporate_actions_missing') && !codes(r).includes('corporate_actions_applied'), codes(r).join());
      assert.ok(held.length > 0, 'the agent held symbols');
      assert.match(r.report.caveats.find((c) => c.code === 'benchmark_actions_missing')!.message, /SPY: none known for .* \(never fetched from the provider\)/);
      const headline = headlineOf(r.report);
      assert.equal(headline.benchmark_basis, 'partial_return');
      assert.match(badgeText({ style: 'return', caution: null, performance: { ...headline, cumulative_return: '0.1', benchmark_return: '0.05' } }).message, /vs SPY partial return \+5\.0%$/);
      assert.match(basisText(r.report), /^ \(partial return: none of its dividends and splits known for \d{4}-\d{2}-\d{2} to /);
    });

    it('asked about for the whole period: a total return, the actions applied; the figures are the same', async () => {
      const before = computed(await labelled().report(agent, 'model'));
      await app.market.saveActionsKnown('synthetic', Object.fromEntries(['SPY', ...held].map((s) => [s, { from: '2020-01-01', through: asOf }])));
      const r = computed(await labelled().report(agent, 'model'));
      assert.equal(r.report.benchmark.basis, 'total_return');
      assert.equal(r.report.benchmark.missing, null);
      assert.deepEqual(r.report.corporate_actions!.missing, []);
      assert.ok(codes(r).includes('benchmark_total_return') && codes(r).includes('corporate_actions_applied'), codes(r).join());
      assert.deepEqual(r.report.series, before.report.series, 'the labels change, not the numbers');
      const price = computed(await labelled().report(agent, 'model', { benchmark_return: 'price' }));
      assert.equal(price.report.benchmark.basis, 'price_return');
    });

    it('the benchmark asked about up to a day inside the period: partial, naming the days after it; price return asked: partial too', async () => {
      const cut = new Date(Date.parse(asOf) - 10 * DAY).toISOString().slice(0, 10);
      await app.market.saveActionsKnown('synthetic', { SPY: { from: '2020-01-01', through: cut } });
      const r = computed(await labelled().report(agent, 'model'));
      assert.equal(r.report.benchmark.basis, 'partial_return');
      assert.deepEqual(r.report.benchmark.missing?.known, { from: '2020-01-01', through: cut });
      const next = new Date(Date.parse(cut) + DAY).toISOString().slice(0, 10);
      assert.match(r.report.caveats.find((c) => c.code === 'benchmark_actions_missing')!.message, new RegExp(`SPY: unknown for ${next} to ${asOf}`));
      assert.ok(codes(r).includes('corporate_actions_applied'), 'the holdings\' actions are known');
      const price = computed(await labelled().report(agent, 'model', { benchmark_return: 'price' }));
      assert.equal(price.report.benchmark.basis, 'partial_return');
      assert.ok(!codes(price).includes('benchmark_price_return'));
      assert.ok(inception <= cut);
    });

    it('one holding asked about from after it was first held: its missing days named, the rest applied', async () => {
      await app.market.saveActionsKnown('synthetic', { SPY: { from: '2020-01-01', through: asOf }, [held[0]!]: { from: asOf, through: asOf } });
      const r = computed(await labelled().report(agent, 'model'));
      assert.equal(r.report.benchmark.basis, 'total_return');
      assert.deepEqual(r.report.corporate_actions!.missing!.map((m) => m.symbol), [held[0]]);
      assert.match(r.report.caveats.find((c) => c.code === 'corporate_actions_missing')!.message, new RegExp(`${held[0]}: unknown for `));
    });
  });
});
