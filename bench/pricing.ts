// `npm run bench -- pricing`: what the pricing job and the observation reads cost in the store at
// 100,000 records (issue 14). The store is seeded (seed.ts), every decision but the newest 100 is
// given an observation by this module's own SQL, then each store call the job makes per round
// (pendingPrices with its scan cursor, countPendingPrices, a flush of 25 observations) and the reads
// the export makes (countObservations for its header, observationsOf for one page) are timed, each
// against the baseline of the same pending query without the cursor, scanning from the oldest
// decision (what the job would cost per tick without it); and the whale's whole export streamed
// without and with the observations.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { exportBody } from '../src/api/routes/public/bodies.ts';
import { PublicReads } from '../src/ledger/public/reads.ts';
import { observationReads } from '../src/market/service.ts';
import { SyntheticMarketData } from '../src/market/synthetic.ts';
import type { MarketStore, PendingPrice, PriceObservation } from '../src/market/port.ts';
import { pendingSql } from '../src/store/market-rows.ts';
import { openStore } from '../src/store/open.ts';
import type { LedgerStore } from '../src/store/port.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { benchStores, freshPostgres, freshSqlite, storeName, type BenchDatabase } from './databases.ts';
import { fixed, integerFlag, markdownTable, progress, quantile, suiteFlags } from './harness.ts';
import { median } from './stats.ts';
import { seed } from './seed.ts';

export type PricingBenchOptions = { records: number; repeats: number; postgres: boolean };

export function pricingOptions(argv: string[]): PricingBenchOptions {
  const v = suiteFlags(argv, {
    records: { type: 'string', default: '100000' },
    repeats: { type: 'string', default: '50' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return { records: integerFlag('records', v.records, 1000), repeats: integerFlag('repeats', v.repeats, 3), postgres: !v['no-postgres'] };
}

const LEFT_PENDING = 100;

type Timing = { label: string; samples: number[] };

async function time(label: string, repeats: number, work: () => Promise<unknown>): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return { label, samples };
}

/** Runs one of the bench's statements on the store's own database. */
async function sql(store: LedgerStore, statement: string, params: unknown[] = []): Promise<void> {
  if (store instanceof SqliteStore) {
    store.db.prepare(statement.replace(/\$\d+/g, '?')).run(...params);
    return;
  }
  await (store as unknown as { pool: pg.Pool }).pool.query(statement, params);
}

/** Every decision but the newest `left` observed, in one statement. */
async function observeAllBut(store: LedgerStore, kind: BenchDatabase['kind'], left: number): Promise<void> {
  const t = kind === 'sqlite' ? '1' : 'true';
  const f = kind === 'sqlite' ? '0' : 'false';
  await sql(store, `INSERT INTO price_observations (record_id, agent_id, chain_seq, symbol, asked_at, observed_at, source, feed, synthetic, status,
      price, provider_time, age_ms, stale, reason)
    SELECT id, agent_id, chain_seq, symbol, recorded_at, recorded_at, 'synthetic', NULL, ${t}, 'priced', '100', recorded_at, 0, ${f}, NULL
    FROM records WHERE type = 'decision' AND sort_key < (SELECT MIN(sort_key) FROM (SELECT sort_key FROM records WHERE type = 'decision' ORDER BY sort_key DESC LIMIT ${left}) n)`);
}

/** The pending query without the cursor: from the oldest decision, every tick. */
async function scanFromStart(store: LedgerStore, kind: BenchDatabase['kind']): Promise<number> {
  const assetClass = kind === 'sqlite' ? "json_extract(r.content, '$.asset_class')" : "(r.content::json)->>'asset_class'";
  if (store instanceof SqliteStore) return store.db.prepare(pendingSql(() => '?', assetClass)).all('', 100).length;
  return (await (store as unknown as { pool: pg.Pool }).pool.query(pendingSql((i) => `$${i}`, assetClass), ['', 100])).rows.length;
}

function observed(p: PendingPrice): PriceObservation {
  return {
    recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt, observedAt: new Date().toISOString(),
    source: 'synthetic', feed: null, synthetic: true, status: 'priced', price: '100', providerTime: p.recordedAt, ageMs: 0, stale: false,
  };
}

async function measureStore(kind: BenchDatabase['kind'], o: PricingBenchOptions): Promise<{ rows: string[][]; note: string }> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const store = openStore(db.url);
  try {
    await store.migrate();
    const started = performance.now();
    const seeded = await seed(store, db.url, { whale: o.records, smallAgents: 3, perSmall: 100, handlePrefix: 'pricing' });
    await observeAllBut(store, kind, LEFT_PENDING);
    // As autovacuum would soon after a bulk load: the planner's statistics of the new rows.
    if (kind === 'postgres') await sql(store, 'ANALYZE');
    progress(`${storeName(kind)}: ${seeded.total} records seeded and observed but ${LEFT_PENDING} in ${fixed((performance.now() - started) / 1000, 1)} s`);
    const market: MarketStore = store.market;

    const first = await time('pendingPrices, first tick (cursor at the start)', 1, () => market.pendingPrices('synthetic', 100));
    const timings: Timing[] = [
      first,
      await time('pendingPrices, each tick after (cursor)', o.repeats, () => market.pendingPrices('synthetic', 100)),
      await time('countPendingPrices(10,000) (status)', o.repeats, () => market.countPendingPrices(10_000)),
      await time(`countObservations, ${o.records} observed (export header)`, o.repeats, () => market.countObservations(seeded.whale.agentId, o.records)),
      await time('observationsOf, a page of 1,000 (export)', o.repeats, () => market.observationsOf(seeded.whale.agentId, Math.floor(o.records / 2), 1000)),
    ];
    const pending = await market.pendingPrices('synthetic', LEFT_PENDING);
    let flushed = 0;
    timings.push(await time('saveObservations, a flush of 25', Math.floor(pending.length / 25), async () => {
      await market.saveObservations(pending.slice(flushed, flushed + 25).map(observed));
      flushed += 25;
    }));
    const baseline = await time('pending query without the cursor (baseline)', Math.min(o.repeats, 10), () => scanFromStart(store, kind));
    const base = median(baseline.samples);
    const exports = await exportTimes(store, seeded.whale.handle);
    const rows = [...timings, baseline].map((t) => {
      const sorted = [...t.samples].sort((a, b) => a - b);
      const m = median(t.samples);
      return [storeName(kind), t.label, fixed(m, 3), fixed(quantile(sorted, 0.99), 3), fixed(m / base, 4)];
    });
    const [plain, annotated] = exports.map((t) => median(t.samples));
    const note = `${storeName(kind)}: ${seeded.total} records, ${LEFT_PENDING} pending; the whale's export (${o.records} lines) streamed in ` +
      `${fixed(plain! / 1000, 2)} s without observations, ${fixed(annotated! / 1000, 2)} s with them (ratio ${fixed(annotated! / plain!, 2)}, median of 3 each, interleaved)`;
    return { rows, note };
  } finally {
    await store.close();
    await db.remove();
  }
}

/** The whale's export streamed whole through PublicReads, without and with the observations, interleaved. */
async function exportTimes(store: LedgerStore, handle: string): Promise<[Timing, Timing]> {
  const reads = new PublicReads(store, 'http://127.0.0.1/v1');
  const annotations = observationReads(store, new SyntheticMarketData('bench')).exportAnnotations();
  const drain = async (withObservations: boolean) => {
    const exported = await reads.export(handle, withObservations ? annotations : undefined);
    if (!exported.ok) throw new Error(exported.error.message);
    let bytes = 0;
    for await (const chunk of exportBody(exported.value).lines) bytes += chunk.length;
    return bytes;
  };
  const plain: Timing = { label: 'export', samples: [] };
  const annotated: Timing = { label: 'export with observations', samples: [] };
  for (let i = 0; i < 3; i++) {
    for (const [t, withObservations] of [[plain, false], [annotated, true]] as const) {
      const started = performance.now();
      await drain(withObservations);
      t.samples.push(performance.now() - started);
    }
  }
  return [plain, annotated];
}

export async function pricingBench(o: PricingBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: string[][] = [];
  for (const kind of await benchStores(o.postgres, notes)) {
    const measured = await measureStore(kind, o);
    rows.push(...measured.rows);
    notes.push(measured.note);
  }
  return [
    `# pricing: the job's store calls and the observation reads at ${o.records} records`,
    '',
    markdownTable(['store', 'call', 'median ms', 'p99 ms', 'ratio to the scan without cursor'], rows),
    '',
    ...notes.map((n) => `- ${n}`),
    `- ${o.repeats} runs of each call (the first tick once); the baseline is the same pending query from the oldest decision.`,
  ].join('\n');
}
