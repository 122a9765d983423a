// The performance benchmark (issue 14), on SQLite and PostgreSQL: one agent with 100,000
// decisions over 5 years (seeded by seed.ts, priced at receipt by the synthetic model), and
//   (a) its model report from scratch (records, observations and cached closes read, every
//       decision applied, every day valued, the report stored), against the baseline of reading
//       the same records and observations alone;
//   (b) the report brought up to date after one new decision (recorded through the record path),
//       against the baseline of recording that decision; and after one new day of closes;
//   (c) GET /v1/agents/{handle} p50/p99 with its portfolios and performance, against the same
//       profile on a service without the performance wing, in the same run;
//   (e) the perf_v2 report from scratch with --actions corporate actions per symbol (splits,
//       reverse splits, cash and stock dividends, over the agent's years, the benchmark's too),
//       against (a), perf_v1 from scratch, in the same run;
//   (f) that report's inputs bundle (GET .../performance/inputs) streamed over HTTP to a reader that
//       discards it, time and the process's RSS growth, against the export of the same agent
//       (GET /v1/export, the same records streamed) in the same run.
// Targets (issue 14): from scratch < 1 s; incremental and profile read p99 < 20 ms; (issue 25)
// perf_v2 from scratch with 40 actions per held symbol < 1 s.
//
//   npm run bench -- performance [--decisions 100000] [--years 5] [--reads 400] [--actions 40] [--no-postgres]
//
// What is measured is the compiled service in dist/ (what `ledger serve` runs; `npm run bench`
// builds it first), not src/ through tsx, whose keepNames wrapper on every closure makes a report
// from scratch slower (history/performance.md). Seeding and the harness stay in src/.
import { buildApp, type LedgerApp } from '../dist/api/app.js';
import { compose } from '../dist/compose.js';
import { loadConfig } from '../dist/config.js';
import type { Agent } from '../dist/domain/types.js';
import { signatureChecker } from '../dist/ledger/signing.js';
import type { Clock } from '../dist/domain/clock.js';
import { SyntheticMarketData } from '../dist/market/synthetic.js';
import { readDecisions } from '../dist/performance/inputs.js';
import type { ActionInput } from '../dist/method/perf/actions.js';
import { PerformanceService } from '../dist/performance/service.js';
import type { MarketStore, PriceObservation } from '../dist/market/port.js';
import type { PerformanceStore } from '../dist/performance/port.js';
import { openStore } from '../dist/store/open.js';
import type { LedgerStore } from '../dist/store/port.js';
import { benchStores, freshPostgres, freshSqlite, storeName, type BenchDatabase } from './databases.ts';
import { fixed, integerFlag, markdownTable, progress, quantile, suiteFlags } from './harness.ts';
import { seed } from './seed.ts';

export type PerformanceBenchOptions = { decisions: number; years: number; reads: number; actions: number; postgres: boolean };

const GOAL = { scratchMs: 1000, incrementalMs: 20, readP99Ms: 20 };
const DAY = 86_400_000;
const SEED = 'decision-ledger';

export function performanceOptions(argv: string[]): PerformanceBenchOptions {
  const v = suiteFlags(argv, {
    decisions: { type: 'string', default: '100000' },
    years: { type: 'string', default: '5' },
    reads: { type: 'string', default: '400' },
    actions: { type: 'string', default: '40' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    decisions: integerFlag('decisions', v.decisions, 1), years: integerFlag('years', v.years, 1), reads: integerFlag('reads', v.reads, 10), actions: integerFlag('actions', v.actions, 0),
    postgres: !v['no-postgres'],
  };
}

type Timing = { wall: number; cpu: number };
type Row = {
  kind: BenchDatabase['kind'];
  decisions: number;
  series: number;
  firstScratch: Timing;
  scratch: Timing;
  readInputs: Timing;
  ownRead: Timing;
  incremental: number[];
  record: number[];
  newDay: Timing;
  profile: number[];
  bareProfile: number[];
  reportBytes: number;
  /** GET .../performance/outcomes?limit=100 at the first, middle and last page, and GET .../chain?limit=100 there. */
  outcomes: number[];
  chainPages: number[];
  outcomesCpu: number;
  /** (e) perf_v2 from scratch (median of 3), the actions given and the events the report lists. */
  scratchV2: Timing;
  actionsGiven: number;
  eventsApplied: number;
  /** (f) the inputs bundle and the export streamed. */
  bundle: Streamed;
  exported: Streamed;
};

/** A body streamed over HTTP and discarded: its time, its size, and the peak RSS above the RSS before it. */
type Streamed = { wall: number; bytes: number; rssGrowth: number };

/** GET `url` over a socket, reading and dropping the body, sampling this process's RSS meanwhile. */
async function streamed(url: string): Promise<Streamed> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 10);
  const t0 = performance.now();
  let bytes = 0;
  try {
    const res = await fetch(url);
    if (res.status !== 200 || res.body === null) throw new Error(`GET ${url} answered ${res.status}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { wall: performance.now() - t0, bytes, rssGrowth: peak - before };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T } & Timing> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await work();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return { value, wall, cpu: (cpu.user + cpu.system) / 1000 };
}

const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
const p99 = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.99);

/** Stored reports that read as none: every computation through them starts from scratch. */
function forgetting(reports: PerformanceStore): PerformanceStore {
  return new Proxy(reports, {
    get: (target, key) => {
      if (key === 'report') return async () => null;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export async function performanceBench(o: PerformanceBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  for (const kind of await benchStores(o.postgres, notes)) rows.push(await measure(kind, o));
  return report(o, rows, notes);
}

async function measure(kind: BenchDatabase['kind'], o: PerformanceBenchOptions): Promise<Row> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const store = openStore(db.url);
  try {
    await store.migrate();
    const spacing = Math.floor((o.years * 365 * DAY) / o.decisions);
    progress(`${storeName(kind)}: seeding ${o.decisions} decisions over ${o.years} years`);
    const seeded = await seed(store, db.url, { whale: o.decisions, smallAgents: 0, perSmall: 0, spacingMs: spacing, handlePrefix: 'perf' });
    const agent = (await store.findAgentByHandle(seeded.whale.handle)) as Agent;
    const market: MarketStore = store.market;
    const synthetic = new SyntheticMarketData(SEED);
    progress(`${storeName(kind)}: pricing them at receipt`);
    await priceAll(store, market, synthetic, agent.id);
    await market.pendingPrices('synthetic', 1); // the pricing job's next tick: its scan cursor passes what is observed
    const clock: Clock = { now: () => new Date() };
    const service = (reports: PerformanceStore) => new PerformanceService({ store, market, reports, provider: synthetic, synthetic, benchmark: 'SPY', clock });

    progress(`${storeName(kind)}: from scratch`);
    const first = await timed(() => service(forgetting(store.performance)).report(agent, 'model'));
    const scratchRuns: Timing[] = [];
    for (let i = 0; i < 3; i++) scratchRuns.push(await timed(() => service(forgetting(store.performance)).report(agent, 'model')));
    const inputs = await timed(() => readThroughPorts(store, market, agent.id, seeded.whale.records));
    const ownRead = await timed(() => readDecisions(market, agent.id, 0, seeded.whale.records));
    const live = service(store.performance);
    const computed = await live.report(agent, 'model');
    if (!computed.ok || computed.value.status !== 'computed') throw new Error('no report computed');
    const stored = await store.performance.report(agent.id, 'model');

    progress(`${storeName(kind)}: perf_v2 from scratch with ${o.actions} corporate actions per symbol`);
    const actions = corporateActions(computed.value.report.inception as string, computed.value.report.as_of as string, o.actions);
    const v2 = (reports: PerformanceStore) => new PerformanceService({
      store, market, reports, provider: synthetic, synthetic, benchmark: 'SPY', clock, method: 'perf_v2',
      corporateActions: async (_source, symbols) => actions.filter((a) => symbols.includes(a.symbol)),
      actionsKnown: (source, symbols) => market.actionsKnown(source, symbols), // the store's read, as production (performanceOf) makes it
    });
    await v2(forgetting(store.performance)).report(agent, 'model'); // warm, as (a)'s first run
    const v2Runs: Timing[] = [];
    let eventsApplied = 0;
    for (let i = 0; i < 3; i++) {
      const run = await timed(() => v2(forgetting(store.performance)).report(agent, 'model'));
      v2Runs.push(run);
      if (run.value.ok && run.value.value.status === 'computed') eventsApplied = run.value.value.report.corporate_actions?.events.length ?? 0;
    }

    progress(`${storeName(kind)}: the inputs bundle streamed, against the export`);
    const bundleServer = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: db.url, LEDGER_READ_LIMIT_PER_MIN: '1000000000', LEDGER_LOG_LEVEL: 'warn' }), clock, checkSignature: signatureChecker(store) }, { performance: v2(store.performance) }));
    const at = await bundleServer.app.listen({ port: 0, host: '127.0.0.1' });
    let bundle: Streamed | null = null;
    let exported: Streamed | null = null;
    for (let i = 0; i < 2; i++) { // the first round warms both (the report computed and stored)
      bundle = await streamed(`${at}/v1/agents/${agent.handle}/performance/inputs?portfolio=model`);
      exported = await streamed(`${at}/v1/export?agent=${agent.handle}`);
    }
    await bundleServer.close();

    progress(`${storeName(kind)}: one decision at a time`);
    const ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: db.url, LEDGER_WRITE_LIMIT_PER_MIN: '1000000', LEDGER_READ_LIMIT_PER_MIN: '1000000000', LEDGER_LOG_LEVEL: 'warn' }), clock, checkSignature: signatureChecker(store) }, { performance: live }));
    const { incremental, record } = await oneAtATime(ledger, store, market, synthetic, live, agent, seeded.whale.secret, 30);

    progress(`${storeName(kind)}: profile reads`);
    const profile = await reads(ledger, agent.handle, o.reads);
    const bare = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: db.url, LEDGER_LOG_LEVEL: 'warn' }), clock, checkSignature: signatureChecker(store) }));
    const bareProfile = await reads(bare, agent.handle, o.reads);
    await bare.close();

    progress(`${storeName(kind)}: decision outcomes pages`);
    const pages = await outcomePages(ledger, agent.handle, Math.max(10, Math.floor(o.reads / 4)));

    // A new day: the same report a day later needs the day's closes of every held symbol.
    const later: Clock = { now: () => new Date(Date.now() + DAY) };
    const nextDay = new PerformanceService({ store, market, reports: store.performance, provider: synthetic, synthetic, benchmark: 'SPY', clock: later });
    const newDay = await timed(() => nextDay.report(agent, 'model'));
    await ledger.close();
    const median3 = (k: keyof Timing) => median(scratchRuns.map((r) => r[k]));
    return {
      kind, decisions: o.decisions, series: computed.value.report.series.length,
      firstScratch: { wall: first.wall, cpu: first.cpu }, scratch: { wall: median3('wall'), cpu: median3('cpu') },
      readInputs: { wall: inputs.wall, cpu: inputs.cpu }, ownRead: { wall: ownRead.wall, cpu: ownRead.cpu }, incremental, record, newDay: { wall: newDay.wall, cpu: newDay.cpu },
      profile, bareProfile, reportBytes: stored?.report.length ?? 0, ...pages,
      scratchV2: { wall: median(v2Runs.map((r) => r.wall)), cpu: median(v2Runs.map((r) => r.cpu)) }, actionsGiven: actions.length, eventsApplied,
      bundle: bundle as Streamed, exported: exported as Streamed,
    };
  } finally {
    await store.close();
    await db.remove();
  }
}

const BENCH_SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL', 'META', 'TSLA', 'BTC/USD', 'ETH/USD', 'SPY', 'QQQ', 'AMD', 'NFLX', 'JPM', 'XOM', 'KO'];

/**
 * `perSymbol` corporate actions for each symbol the seeded agent trades (seed.ts's list, the
 * benchmark SPY among them), spread evenly from its first record to its last valued day: every
 * tenth a 2:1 split, every tenth (offset 5) a 1:2 reverse split, every seventh a 2 % stock
 * dividend, the rest cash dividends paid three weeks after their ex-date; each learned a month
 * before it goes ex.
 */
function corporateActions(inception: string, asOf: string, perSymbol: number): ActionInput[] {
  const start = Date.parse(inception.slice(0, 10));
  const span = Date.parse(asOf) - start;
  const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const out: ActionInput[] = [];
  for (const symbol of BENCH_SYMBOLS) {
    for (let j = 0; j < perSymbol; j++) {
      const at = start + Math.floor(((j + 0.5) * span) / perSymbol);
      const ex = date(at);
      const base = { provider_id: `${symbol}-${j}`, symbol, ex_date: ex, process_date: ex, payable_date: null, old_rate: null, new_rate: null, rate: null, seen_at: new Date(at - 30 * DAY).toISOString() };
      if (j % 10 === 0) out.push({ ...base, type: 'forward_split', new_rate: '2', old_rate: '1' });
      else if (j % 10 === 5) out.push({ ...base, type: 'reverse_split', new_rate: '1', old_rate: '2' });
      else if (j % 7 === 0) out.push({ ...base, type: 'stock_dividend', rate: '0.02' });
      else out.push({ ...base, type: 'cash_dividend', rate: '0.24', payable_date: date(at + 21 * DAY) });
    }
  }
  return out;
}

/**
 * The baseline of (a): the agent's records and observations read through the general ports
 * (LedgerStore.listChain, MarketStore.observationsOf), pages of 5,000, each content parsed.
 */
async function readThroughPorts(store: LedgerStore, market: MarketStore, agentId: string, headSeq: number): Promise<number> {
  let parsed = 0;
  for (let after = 0; after < headSeq;) {
    const [records, observations] = await Promise.all([store.listChain(agentId, after, 5000), market.observationsOf(agentId, after, 5000)]);
    if (records.length === 0) break;
    const observed = new Map(observations.map((o) => [o.recordId, o]));
    for (const r of records) {
      if (r.type === 'decision' && observed.has(r.id) && JSON.parse(r.content) !== null) parsed++;
      after = r.chainSeq;
    }
  }
  return parsed;
}

/** The price at receipt of every decision of the agent, as the pricing job saves it. */
async function priceAll(store: LedgerStore, market: MarketStore, synthetic: SyntheticMarketData, agentId: string, afterSeq = 0): Promise<void> {
  for (let after = afterSeq; ;) {
    const page = await store.listChain(agentId, after, 5000);
    if (page.length === 0) return;
    const rows: PriceObservation[] = [];
    for (const r of page) {
      after = r.chainSeq;
      const symbol = r.symbol as string;
      const got = await synthetic.latestTrade(symbol, new Date(r.recordedAt));
      const base = { recordId: r.id, agentId, chainSeq: r.chainSeq, symbol, askedAt: r.recordedAt, observedAt: r.recordedAt, source: 'synthetic' as const, feed: null, synthetic: true };
      rows.push(got.ok
        ? { ...base, status: 'priced', price: got.value.price, providerTime: got.value.provider_time, ageMs: got.value.age_ms, stale: got.value.stale }
        : { ...base, status: 'unpriced', reason: got.error.code });
    }
    await market.saveObservations(rows);
  }
}

/** `n` times: record one decision (POST /v1/decisions), price it, bring the report up to date. */
async function oneAtATime(ledger: LedgerApp, store: LedgerStore, market: MarketStore, synthetic: SyntheticMarketData, service: PerformanceService, agent: Agent, secret: string, n: number) {
  const incremental: number[] = [];
  const record: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await ledger.app.inject({
      method: 'POST', url: '/v1/decisions',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `perf-bench-${i}-${Date.now()}` },
      payload: JSON.stringify({ symbol: 'AAPL', action: i % 2 ? 'SELL' : 'BUY', quantity: '5', time_horizon: '2 weeks' }),
    });
    record.push(performance.now() - t0);
    if (res.statusCode !== 201) throw new Error(`POST /v1/decisions answered ${res.statusCode}: ${res.body}`);
    const head = await store.chainHead(agent.id);
    await priceAll(store, market, synthetic, agent.id, head.seq - 1);
    const t1 = performance.now();
    const r = await service.report(agent, 'model');
    incremental.push(performance.now() - t1);
    if (!r.ok || r.value.status !== 'computed' || r.value.through_seq !== head.seq) throw new Error('the report did not take the new decision');
  }
  return { incremental, record };
}

async function reads(ledger: LedgerApp, handle: string, n: number): Promise<number[]> {
  const url = `/v1/agents/${handle}`;
  for (let i = 0; i < 20; i++) await ledger.app.inject({ method: 'GET', url });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await ledger.app.inject({ method: 'GET', url });
    out.push(performance.now() - t0);
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
  }
  return out;
}

/**
 * Pages of 100 decision outcomes at the chain's start, middle and end (cursors from a walk at
 * limit 500), each against the chain page of the same records (GET /chain?after_seq=&limit=100).
 */
async function outcomePages(ledger: LedgerApp, handle: string, n: number): Promise<{ outcomes: number[]; chainPages: number[]; outcomesCpu: number }> {
  const get = async (url: string) => {
    const res = await ledger.app.inject({ method: 'GET', url });
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    return res;
  };
  const starts: Array<{ cursor: string | null; afterSeq: number }> = [{ cursor: null, afterSeq: 0 }];
  const walk: Array<{ cursor: string; afterSeq: number }> = [];
  for (let url: string | null = `/v1/agents/${handle}/performance/outcomes?limit=500`; url !== null;) {
    const page = (await get(url)).json() as { next_cursor: string | null; data: Array<{ seq: number }> };
    if (page.next_cursor) walk.push({ cursor: page.next_cursor, afterSeq: page.data.at(-1)?.seq ?? 0 });
    url = page.next_cursor ? `/v1/agents/${handle}/performance/outcomes?limit=500&cursor=${page.next_cursor}` : null;
  }
  if (walk.length > 0) starts.push(walk[Math.floor(walk.length / 2)]!, walk[walk.length - 1]!);
  const outcomes: number[] = [];
  const chainPages: number[] = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    for (const s of starts) {
      let t0 = performance.now();
      await get(`/v1/agents/${handle}/performance/outcomes?limit=100${s.cursor ? `&cursor=${s.cursor}` : ''}`);
      outcomes.push(performance.now() - t0);
      t0 = performance.now();
      await get(`/v1/agents/${handle}/chain?limit=100&after_seq=${s.afterSeq}`);
      chainPages.push(performance.now() - t0);
    }
  }
  const cpu = process.cpuUsage(c0);
  return { outcomes, chainPages, outcomesCpu: (cpu.user + cpu.system) / 1000 / (n * starts.length) };
}

function report(o: PerformanceBenchOptions, rows: Row[], notes: string[]): string {
  const ms = (x: number) => fixed(x, x < 10 ? 2 : 0);
  const mark = (ok: boolean) => (ok ? 'met' : 'not met');
  return [
    `## performance: ${o.decisions.toLocaleString('en')} decisions over ${o.years} years, one agent`,
    '',
    markdownTable(['store', 'valued days', 'from scratch ms (CPU)', 'first, closes fetched ms', 'of which its inputs read ms (CPU)', 'baseline: read records + observations ms (CPU)', 'ratio', `< ${GOAL.scratchMs} ms`],
      rows.map((r) => [storeName(r.kind), String(r.series), `${ms(r.scratch.wall)} (${ms(r.scratch.cpu)})`, ms(r.firstScratch.wall), `${ms(r.ownRead.wall)} (${ms(r.ownRead.cpu)})`,
        `${ms(r.readInputs.wall)} (${ms(r.readInputs.cpu)})`, fixed(r.scratch.wall / r.readInputs.wall), mark(r.scratch.wall < GOAL.scratchMs)])),
    '',
    markdownTable(['store', `perf_v2 from scratch, ${o.actions} actions per symbol, ms (CPU)`, 'actions given / events applied', 'baseline: perf_v1 from scratch ms (same run)', 'ratio', `< ${GOAL.scratchMs} ms`],
      rows.map((r) => [storeName(r.kind), `${ms(r.scratchV2.wall)} (${ms(r.scratchV2.cpu)})`, `${r.actionsGiven} / ${r.eventsApplied}`, ms(r.scratch.wall), fixed(r.scratchV2.wall / r.scratch.wall), mark(r.scratchV2.wall < GOAL.scratchMs)])),
    '',
    markdownTable(['store', 'inputs bundle streamed ms, MB', 'RSS growth MB', 'baseline: export streamed ms, MB', 'ratio (ms)', 'RSS growth MB (export)'],
      rows.map((r) => [storeName(r.kind), `${ms(r.bundle.wall)}, ${fixed(r.bundle.bytes / 1e6, 1)}`, fixed(r.bundle.rssGrowth / 1e6, 1), `${ms(r.exported.wall)}, ${fixed(r.exported.bytes / 1e6, 1)}`,
        fixed(r.bundle.wall / r.exported.wall), fixed(r.exported.rssGrowth / 1e6, 1)])),
    '',
    markdownTable(['store', 'after one decision p50 / p99 ms', 'baseline: its POST p50 / p99 ms', 'ratio (p50)', `< ${GOAL.incrementalMs} ms (p99)`, 'after a new day ms (CPU)', 'stored report KB'],
      rows.map((r) => [storeName(r.kind), `${ms(median(r.incremental))} / ${ms(p99(r.incremental))}`, `${ms(median(r.record))} / ${ms(p99(r.record))}`,
        fixed(median(r.incremental) / median(r.record)), mark(p99(r.incremental) < GOAL.incrementalMs), `${ms(r.newDay.wall)} (${ms(r.newDay.cpu)})`, fixed(r.reportBytes / 1024, 0)])),
    '',
    markdownTable(['store', 'GET /v1/agents/{h} p50 / p99 ms', 'baseline: without performance p50 / p99 ms', 'ratio (p99)', `p99 < ${GOAL.readP99Ms} ms`],
      rows.map((r) => [storeName(r.kind), `${ms(median(r.profile))} / ${ms(p99(r.profile))}`, `${ms(median(r.bareProfile))} / ${ms(p99(r.bareProfile))}`,
        fixed(p99(r.profile) / p99(r.bareProfile)), mark(p99(r.profile) < GOAL.readP99Ms)])),
    '',
    markdownTable(['store', 'GET .../performance/outcomes?limit=100 p50 / p99 ms', 'baseline: GET .../chain?limit=100 p50 / p99 ms', 'ratio (p50)', 'CPU ms per outcomes + chain page'],
      rows.map((r) => [storeName(r.kind), `${ms(median(r.outcomes))} / ${ms(p99(r.outcomes))}`, `${ms(median(r.chainPages))} / ${ms(p99(r.chainPages))}`,
        fixed(median(r.outcomes) / median(r.chainPages)), ms(r.outcomesCpu)])),
    '',
    'From scratch: a PerformanceService with no stored report computes the model report (records and observations read a page at a time, closes from the cache, ' +
    'every decision applied, every benchmark day valued, metrics, the report stored); median of 3 runs, the first run (closes fetched from the synthetic provider and cached) apart. ' +
    'Its inputs read: readDecisions alone (the chain the pricing job has passed from the priced_decisions projection, MarketStore.pricedDecisions; the rest record by record). ' +
    'Baseline: reading the same records and observations alone through the general ports (listChain and observationsOf, pages of 5,000, each content parsed). After one decision: POST /v1/decisions (in process), the decision priced, then the report brought up to date ' +
    `(30 times). Profile: ${o.reads} sequential GET /v1/agents/{handle} in process after 20 warm-up reads, against a service without the performance wing on the same store. ` +
    'Outcomes: 100 decisions\' outcomes at the first, middle and last page of the chain (cursors from a walk at limit 500), each read followed by the chain page of the same records. ' +
    'Inputs bundle: GET /v1/agents/{h}/performance/inputs of the perf_v2 report of (e), over a socket to a reader in this process that drops each chunk, second of two rounds; RSS growth: the peak of this process\'s RSS (sampled every 10 ms) above its RSS before the request (server and reader together); baseline: GET /v1/export of the same agent, the same way. ' +
    'CPU: this process\'s user + system time (PostgreSQL\'s own is not counted).',
    '',
    ...notes,
  ].join('\n');
}
