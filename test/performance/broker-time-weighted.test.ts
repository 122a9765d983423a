// The service serves the time-weighted broker curve (docs/perf_v1.md §3.1), on both stores:
// an agent whose Alpaca account (the simulator's `activities` scenario) has a complete history from
// its deposit gets a `time_weighted` report whose figures are the method's (day one and the book
// by hand: the split comes from the broker's own SPLIT rows, the dividend and the fee from its
// rows, the withdrawal neutralised); an agent whose imported history lacks the deposit stays
// trade-derived and says so; `ledger verify --performance` recomputes both from their inputs
// bundles (which carry the activity records) and fails naming the record when an activity is altered
// (its content is no longer the chain's), while the recomputation alone names the figure;
// an activity the method cannot apply, arriving later, turns the curve trade-derived again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { timeWeightedView, type ActivityInput } from '../../src/method/perf/broker-history.ts';
import type { CloseLine, RecordLine } from '../../src/method/perf/bundle.ts';
import { fillInput } from '../../src/method/perf/inputs.ts';
import { Dec, money } from '../../src/method/perf/numbers.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { firstDifference, readBundle, recompute, verifyPerformance } from '../../src/verify/performance.ts';
import { alpacaActivities } from '../../src/brokers/activity.ts';
import { recordActivities } from '../../src/brokers/activity-import.ts';
import { accountWithActivities, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { forEachStore } from '../support/stores.ts';
import { altering } from './altering-fetch.ts';
import { brokerTestApp, connectAlpaca, type BrokerTestApp } from '../brokers/wiring-support.ts';

type Line = Record<string, unknown>;
type Doc = { basis: string; start_value: string; series: Array<{ date: string; value: string }>; holdings: { cash: string; positions: Array<{ symbol: string; quantity: string }> }; caveats: Array<{ code: string; message: string }> };

await forEachStore('the time-weighted broker curve served and verified', (kind) => {
  let alpaca: AlpacaSim;
  let store: LedgerStore;
  let t: BrokerTestApp;
  let base: string;
  let closeServer = async () => undefined as void;
  let complete: Awaited<ReturnType<BrokerTestApp['agent']>>;
  let incomplete: Awaited<ReturnType<BrokerTestApp['agent']>>;
  const doc = async (handle: string) => (await (await fetch(`${base}/v1/agents/${handle}/performance?portfolio=broker`)).json()) as Doc;
  const bundle = async (handle: string) => (await (await fetch(`${base}/v1/agents/${handle}/performance/inputs?portfolio=broker`)).text()).trim().split('\n').map((l) => JSON.parse(l) as Line);

  before(async () => {
    alpaca = await startAlpacaSim({ scenario: accountWithActivities({ interestRows: 3 }) });
    store = await kind.open();
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: alpaca.url }, '2026-02-03T12:00:00.000Z');
    complete = await t.agent();
    const first = await t.brokers.syncNow(await connectAlpaca(t, complete.secret, alpaca));
    assert.equal(first.kind, 'synced', JSON.stringify(first));
    // the second account's import lacks its deposit: its history does not start from a known balance
    alpaca.scenario.activities = (alpaca.scenario.activities ?? []).filter((a) => a.activity_type !== 'CSD');
    incomplete = await t.agent();
    const second = await t.brokers.syncNow(await connectAlpaca(t, incomplete.secret, alpaca));
    assert.equal(second.kind, 'synced', JSON.stringify(second));

    const synthetic = new SyntheticMarketData('broker-time-weighted');
    const clock = { now: () => new Date('2026-02-10T12:00:00.000Z') };
    const performance = new PerformanceService({ store, market: store.market, reports: store.performance, provider: synthetic, synthetic, benchmark: 'SPY', clock, method: 'perf_v2' });
    const ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock, checkSignature: signatureChecker(store) }, { performance }));
    base = await ledger.app.listen({ port: 0, host: '127.0.0.1' });
    closeServer = () => ledger.close();
  });
  after(async () => {
    await closeServer();
    await t?.close();
    await store?.close();
    await alpaca?.close();
    await kind.cleanup();
  });

  describe('a complete history from a deposit', () => {
    it('is served time-weighted: rule 7\'s caveat goes, the book is the broker\'s (split from its SPLIT rows, not the market\'s)', async () => {
      const d = await doc(complete.handle);
      assert.equal(d.basis, 'time_weighted');
      assert.ok(!d.caveats.some((c) => c.code === 'trade_derived' || c.code === 'corporate_actions_applied'), JSON.stringify(d.caveats));
      assert.match(d.caveats.find((c) => c.code === 'time_weighted')!.message, /first deposit \(2026-01-05\)/);
      assert.deepEqual(d.holdings.positions.map((p) => [p.symbol, p.quantity]), [['XYZ', '50']], '10 bought, 10:1, 50 sold');
      // 12,000 in, 10,000 out for 10 XYZ, +25 dividend, -3.75 withheld, +5,150 sold, -0.02 fee, -500 withdrawn, +0.03 interest
      assert.equal(d.holdings.cash, '6671.26');
    });

    it('has the figures of the method: day one by hand, every day as reconstructTimeWeighted gives them from the bundle', async () => {
      const d = await doc(complete.handle);
      const lines = await bundle(complete.handle);
      const records = lines.filter((l) => l.kind === 'record') as RecordLine[];
      const chainInput = (r: RecordLine) => ({ chainSeq: r.chain_seq, id: r.id, type: r.type, recordedAt: r.recorded_at, symbol: r.symbol, content: r.content, observation: r.observation });
      const fills = records.filter((r) => r.type === 'execution').map((r) => fillInput(chainInput(r)));
      const activities = records.filter((r) => r.type === 'activity').map((r): ActivityInput => ({ ...(JSON.parse(r.content) as Omit<ActivityInput, 'id'>), id: r.id }));
      assert.equal(activities.length, 10, 'the bundle carries every activity record');
      const xyz = (lines.filter((l) => l.kind === 'close' && l.symbol === 'XYZ') as CloseLine[]).map((c) => ({ date: c.date, close: c.close }));
      // 2026-01-06: 12,000 deposited the day before, 10 XYZ bought at 1,000: V = 2,000 + 10 × close, published start × V / 12,000
      assert.equal(d.series[0]!.date, '2026-01-06');
      const close = xyz.find((c) => c.date === '2026-01-06')!.close;
      assert.equal(d.series[0]!.value, money(new Dec(d.start_value).times(new Dec(2000).plus(new Dec(close).times(10))).div(12000)));
      const expected = timeWeightedView(fills, activities, d.series.map((r) => r.date), { XYZ: xyz });
      assert.deepEqual(d.series.map((r) => r.value), expected.values.map((p) => p.value));
    });
  });

  describe('an incomplete history', () => {
    it('stays trade-derived and names what is missing', async () => {
      const d = await doc(incomplete.handle);
      assert.equal(d.basis, 'trade_derived');
      assert.ok(!d.caveats.some((c) => c.code === 'time_weighted'));
      assert.match(d.caveats.find((c) => c.code === 'trade_derived')!.message, /does not start with a deposit/);
    });
  });

  describe('ledger verify --performance', () => {
    for (const which of ['complete', 'incomplete'] as const) {
      it(`recomputes the ${which} account's broker report from its bundle and agrees`, async () => {
        const out: string[] = [];
        const handle = which === 'complete' ? complete.handle : incomplete.handle;
        assert.equal(await verifyPerformance(`${base}/agents/${handle}`, (l) => out.push(l)), 0, out.join('\n'));
        assert.ok(out.some((l) => l.startsWith('ok   performance broker')), out.join('\n'));
      });
    }

    /** The first line verifyPerformance prints FAIL, with the bundle's activity `alter` changes (exit 1). */
    const failing = async (alter: (content: string) => string | null): Promise<string> => {
      const out: string[] = [];
      const code = await verifyPerformance(`${base}/agents/${complete.handle}`, (l) => out.push(l), altering((l) => {
        if (l.kind !== 'record' || l.type !== 'activity') return false;
        const changed = alter(l.content as string);
        if (changed === null) return false;
        l.content = changed;
        return true;
      }));
      assert.equal(code, 1, out.join('\n'));
      return out.find((l) => l.startsWith('FAIL')) ?? '';
    };
    /** The first figure the recomputation alone (no binding to the chain) finds different, with the activity `alter` changes. */
    const recomputedDifference = async (alter: (content: string) => string | null): Promise<string | null> => {
      const api = `${base}/v1/agents/${complete.handle}/performance`;
      const published = await (await fetch(`${api}?portfolio=broker`)).json() as Parameters<typeof firstDifference>[0];
      const text = await (await fetch(`${api}/inputs?portfolio=broker`)).text();
      let done = false;
      const lines = text.split('\n').filter((l) => l !== '').map((l) => {
        const v = JSON.parse(l) as Line;
        const changed = !done && v.kind === 'record' && v.type === 'activity' ? alter(v.content as string) : null;
        if (changed === null) return l;
        done = true;
        return JSON.stringify({ ...v, content: changed });
      });
      assert.ok(done, 'the alteration found its activity');
      return firstDifference(published, recompute(await readBundle(lines)));
    };
    const dividendTimesTen = (c: string) => (c.includes('"DIV"') ? c.replace('"amount":"25"', '"amount":"250"') : null);
    const depositAsJournal = (c: string) => (c.includes('"CSD"') ? c.replace('"CSD"', '"JNLC"') : null);

    it('fails naming the record when one activity record of the bundle is altered: it is not the chain\'s', async () => {
      for (const alter of [dividendTimesTen, depositAsJournal]) {
        const fail = await failing(alter);
        assert.match(fail, /^FAIL performance broker: record seq \d+ \(act_\w+\) of the inputs: its content hashes to [0-9a-f]{64}, the chain's content_hash is [0-9a-f]{64}$/, fail);
      }
    });

    it('the recomputation names the figure when one activity is altered', async () => {
      // the dividend is an event of the report now (source account): its cash is the first figure compared
      assert.match(await recomputedDifference(dividendTimesTen) ?? '', /^corporate_actions\.events\[1\]\.cash_after: published "2021\.25", recomputed "2246\.25"/);
    });

    it('the recomputation names the basis when the deposit is taken out (the recomputed curve is trade-derived)', async () => {
      assert.match(await recomputedDifference(depositAsJournal) ?? '', /basis: published "time_weighted", recomputed "trade_derived"/);
    });
  });

  describe('a history that stops being complete', () => {
    it('turns trade-derived when an activity the method cannot apply arrives: the trade-derived figures, not the time-weighted ones carried over', async () => {
      assert.equal((await doc(complete.handle)).basis, 'time_weighted');
      const agent = (await store.findAgentById(complete.agentId))!;
      const { activities } = alpacaActivities({ accountRef: 'acct-journal', currency: 'USD', rows: [
        { id: '20260109120000000::00000000-0000-4000-a000-000000000777', activity_type: 'JNLC', date: '2026-01-09', created_at: '2026-01-09T12:00:00.000Z', net_amount: '100', status: 'executed', description: 'journal' },
      ] });
      const got = await recordActivities({ store, brokers: store.brokers, clock: t.clock }, { agent, connectionId: 'brk_journal' }, activities);
      assert.equal(got.recorded, 1, JSON.stringify(got));
      const after = await doc(complete.handle);
      assert.equal(after.basis, 'trade_derived');
      assert.match(after.caveats.find((c) => c.code === 'trade_derived')!.message, /cannot apply \(alpaca JNLC ×1\)/);
      // the other agent imported the same fills from the same account: its trade-derived curve is this one's now
      assert.deepEqual(after.series, (await doc(incomplete.handle)).series, 'not the time-weighted series carried over');
    });
  });
});
