// GET /v1/agents/{handle}/performance/outcomes on both stores: every decision exactly once across
// pages while the agent records, rows equal to outcomes.ts's decisionOutcomes over the full closes
// through the report's as_of, hits adding up to the report's hit rates, the CSV, errors naming
// their parameter, unpriced and unobserved decisions null with the reason, and a page's cost
// bounded (no provider call once the report is computed, a few close reads per symbol).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Ajv } from 'ajv';
import { OutcomesResponse, PerformanceResponse } from '../../src/api/routes/public/performance-schemas.ts';
import type { DailyBars, MarketData, MarketResult, TradePrice } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { OUTCOME_CSV_COLUMNS, outcomeCursor } from '../../src/performance/outcome-pages.ts';
import { decisionOutcomes, type OutcomeValue } from '../../src/method/perf/outcomes.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { MarketStore, StoredClose } from '../../src/market/port.ts';
import type { DecisionInput } from '../../src/method/perf/portfolio.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';
import { counting, DAY, performanceApp, recordYear, type PerformanceApp } from './fixtures.ts';

/** The synthetic model, counting its daily-bars calls; `HALT` has no bar from 2025-03-03 to 2025-04-13 (a trading halt). */
class Counted implements MarketData {
  readonly source = 'synthetic' as const;
  readonly synthetic = true;
  readonly description = 'synthetic prices (outcomes test)';
  bars = 0;
  private readonly inner = new SyntheticMarketData('outcomes-test');
  latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>> {
    return this.inner.latestTrade(symbol, at);
  }
  async dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>> {
    this.bars++;
    const got = await this.inner.dailyBars(symbol, from, to);
    if (!got.ok || symbol !== 'HALT') return got;
    return { ok: true, value: { ...got.value, bars: got.value.bars.filter((b) => b.date < '2025-03-03' || b.date > '2025-04-13') } };
  }
  corporateActions(symbols: readonly string[], from: string, to: string) {
    return this.inner.corporateActions(symbols, from, to);
  }
}

/** The closes outcomes.ts is given: every close of each symbol from `from` through asOf, from the provider. */
async function closesFor(provider: MarketData, symbols: Iterable<string>, from: string, asOf: string) {
  const closes: Record<string, Array<{ date: string; close: string }>> = {};
  for (const s of new Set(symbols)) {
    const bars = await provider.dailyBars(s, from, asOf);
    closes[s] = bars.ok ? bars.value.bars.map((b) => ({ date: b.date, close: b.close })) : [];
  }
  return closes;
}

function validator(schema: object) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', true);
  ajv.addFormat('uri', true);
  const check = ajv.compile(schema);
  return (body: unknown) => assert.ok(check(body), JSON.stringify(check.errors?.slice(0, 5)));
}
const validOutcomes = validator(OutcomesResponse);
const validPerformance = validator(PerformanceResponse);

type Row = Record<string, any>;

/** The cell the endpoint publishes for an outcomes.ts value. */
function cellOf(v: OutcomeValue, action: string) {
  if (v.date === null) return { date: null, close: null, return: null, hit: null };
  return { date: v.date, close: v.close, return: v.return, hit: action === 'HOLD' ? null : v.hit };
}

function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (ch === '"') quoted = false; else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(field); field = ''; } else if (ch === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += ch;
  }
  return rows;
}

await forEachStore('decision outcomes, published', (kind) => {
  let store: LedgerStore;
  let made: PerformanceApp;
  let provider: Counted;
  let handle: string;
  let report: Row;
  const market = () => made.market as ReturnType<typeof counting<MarketStore>>;

  before(async () => {
    store = await kind.open();
    provider = new Counted();
    made = await performanceApp(store, provider, counting(store.market));
    handle = await recordYear(made, `outcomes-${kind.name}`);
    const res = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance` });
    assert.equal(res.statusCode, 200, res.body);
    report = res.json();
    validPerformance(report);
    assert.equal(report.status, 'computed');
  });
  after(async () => {
    await made.ledger.close();
    await store.close();
    await kind.cleanup();
  });

  async function get(url: string): Promise<Row> {
    const res = await made.ledger.app.inject({ url });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    validOutcomes(body);
    return body;
  }

  async function walk(limit: number, between: () => Promise<void> = async () => undefined): Promise<Row[]> {
    const rows: Row[] = [];
    let url: string | null = `/v1/agents/${handle}/performance/outcomes?limit=${limit}`;
    for (let pages = 0; url !== null; pages++) {
      assert.ok(pages < 1000);
      const page: Row = await get(url.replace(/^https?:\/\/[^/]+\/v1/, '/v1'));
      assert.ok(page.data.length <= limit);
      rows.push(...page.data);
      assert.equal(page.has_more, page.next_cursor !== null);
      url = page.next;
      await between();
    }
    return rows;
  }

  it('the performance report links its outcomes; the rows are outcomes.ts\'s, through the report\'s as_of, and add up to its hit rates', async () => {
    assert.match(report.links.outcomes, new RegExp(`/v1/agents/${handle}/performance/outcomes\\?portfolio=model$`));
    const rows = await walk(500);
    const chain = await store.listChain((await store.findAgentByHandle(handle))!.id, 0, 10_000);
    const decisions = chain.filter((r) => r.type === 'decision');
    assert.deepEqual(rows.map((r) => r.record_id), decisions.map((r) => r.id));
    // outcomes.ts over every close of each symbol through as_of, straight from the model
    const asOf = report.as_of as string;
    const inputs: DecisionInput[] = rows.map((r) => {
      const c = JSON.parse(decisions.find((d) => d.id === r.record_id)!.content);
      return { id: r.record_id, recorded_at: r.recorded_at, symbol: c.symbol, action: c.action, time_horizon: c.time_horizon ?? null, price: r.price };
    });
    const expected = decisionOutcomes(inputs, await closesFor(new SyntheticMarketData('outcomes-test'), inputs.map((d) => d.symbol), rows[0]!.date, asOf));
    let resolved = 0;
    for (const [i, e] of expected.entries()) {
      const r = rows[i]!;
      assert.equal(r.direction, e.direction);
      assert.deepEqual(Object.fromEntries(['1d', '5d', '21d'].map((h) => [h, { ...r.outcomes[h], reason: undefined }])),
        Object.fromEntries([['1d', 1], ['5d', 5], ['21d', 21]].map(([h, n]) => [h, { ...cellOf(e.at[n as 1 | 5 | 21], e.action), reason: undefined }])), r.record_id);
      assert.deepEqual({ ...r.stated.outcome, reason: undefined }, { ...cellOf(e.stated.outcome, e.action), reason: undefined }, r.record_id);
      assert.deepEqual(r.stated.parsed, e.stated.parsed);
      if (r.outcomes['21d'].date !== null) resolved++;
    }
    assert.ok(resolved > 200, `${resolved} decisions resolved at 21 closes`);
    for (const h of ['1d', '5d', '21d', 'stated']) {
      const cells = rows.map((r) => (h === 'stated' ? r.stated.outcome : r.outcomes[h]));
      const counted = cells.filter((c) => c.hit !== null);
      assert.deepEqual({ hits: counted.filter((c) => c.hit).length, counted: counted.length }, { hits: report.hit_rate[h].hits, counted: report.hit_rate[h].counted }, h);
    }
    // a HOLD has returns and no hit, with the reason
    const hold = rows.find((r) => r.action === 'HOLD' && r.outcomes['1d'].date !== null)!;
    assert.equal(hold.outcomes['1d'].hit, null);
    assert.match(hold.outcomes['1d'].reason, /HOLD/);
    // pending outcomes say through when
    const pending = rows.at(-1)!;
    assert.match(pending.outcomes['21d'].reason, new RegExp(`^pending: fewer than 21 closes of .* through ${asOf}$`));
  });

  it('a page costs a few reads and no provider call once the report is computed', async () => {
    const before = { bars: provider.bars, calls: { ...market().calls } };
    await get(`/v1/agents/${handle}/performance/outcomes?limit=100`);
    const reads = (market().calls.closes ?? 0) - (before.calls.closes ?? 0);
    assert.equal(provider.bars, before.bars, 'no daily bars asked of the provider');
    assert.ok(reads > 0 && reads <= 5 * 4, `${reads} close reads for 100 decisions over 5 symbols`);
    const called = (m: string) => (market().calls[m] ?? 0) - (before.calls[m] ?? 0);
    assert.equal(called('pricedDecisions'), 1, 'one narrow read of the priced_decisions projection');
    assert.equal(called('chainInputs'), 0, 'no record content read');
    assert.equal((market().calls.observationsOf ?? 0) - (before.calls.observationsOf ?? 0), 0);
  });

  it('pages never miss or repeat a decision while the agent records', async () => {
    const agent = (await store.findAgentByHandle(handle))!;
    const key = await new Operators(store, made.clock).issueKey(handle);
    assert.ok(key.ok);
    const before = (await walk(500)).map((r) => r.record_id);
    let added = 0;
    const rows = await walk(23, async () => {
      const res = await postDecision(made.ledger, key.value.apiKey.secret, { symbol: 'AAPL', action: 'BUY', quantity: '1' }, idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      added++;
    });
    const ids = rows.map((r) => r.record_id);
    assert.equal(new Set(ids).size, ids.length, 'no decision twice');
    assert.deepEqual(ids.slice(0, before.length), before, 'every decision there when the walk began, in chain order');
    assert.ok(ids.length > before.length && ids.length <= before.length + added);
    const seqs = rows.map((r) => r.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    // a decision not observed yet: null, with the reason
    const last = rows.at(-1)!;
    assert.equal(last.price, null);
    assert.match(last.price_reason, /awaiting its price at receipt/);
    assert.match(last.outcomes['1d'].reason, /awaiting its price at receipt/);
    await observeDecisions(store, made.market, provider, agent.id);
  });

  it('an unpriced decision shows null with the provider\'s reason', async () => {
    const rows = await walk(500);
    const unpriced = rows.filter((r) => r.symbol === 'brk b');
    assert.ok(unpriced.length > 0);
    for (const r of unpriced) {
      assert.equal(r.price, null);
      assert.match(r.price_reason, /^no price at receipt: /);
      for (const h of ['1d', '5d', '21d']) assert.deepEqual({ ...r.outcomes[h], reason: undefined }, { date: null, close: null, return: null, hit: null, reason: undefined });
      assert.equal(r.outcomes['1d'].reason, r.price_reason);
    }
  });

  it('format=csv: the same page, RFC 4180, the next page in the Link header', async () => {
    const json = await get(`/v1/agents/${handle}/performance/outcomes?limit=40`);
    const res = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance/outcomes?limit=40&format=csv` });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers.link), new RegExp(`^<[^>]*/performance/outcomes\\?portfolio=model&limit=40&cursor=${json.next_cursor}&format=csv>; rel="next"$`));
    assert.ok(res.body.endsWith('\r\n'));
    const [header, ...lines] = csvRows(res.body);
    assert.deepEqual(header, [...OUTCOME_CSV_COLUMNS]);
    assert.equal(lines.length, json.data.length);
    const col = (name: string) => OUTCOME_CSV_COLUMNS.indexOf(name as never);
    for (const [i, line] of lines.entries()) {
      const r = json.data[i];
      assert.equal(line.length, OUTCOME_CSV_COLUMNS.length);
      assert.equal(line[col('record_id')], r.record_id);
      assert.equal(line[col('price')], r.price ?? '');
      assert.equal(line[col('5d_return')], r.outcomes['5d'].return ?? '');
      assert.equal(line[col('5d_hit')], r.outcomes['5d'].hit === null ? '' : String(r.outcomes['5d'].hit));
      assert.equal(line[col('stated_horizon')], r.stated.horizon ?? '');
      assert.equal(line[col('stated_reason')], r.stated.outcome.reason ?? '');
    }
    const last = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance/outcomes?limit=500&format=csv&cursor=${outcomeCursor(100_000)}` });
    assert.equal(last.statusCode, 200);
    assert.equal(last.headers.link, undefined);
    assert.equal(csvRows(last.body).length, 1, 'the header alone');
  });

  it('errors: unknown agent 404; bad limit, cursor, portfolio or parameter 400 naming it', async () => {
    const err = async (url: string, status: number, param: string) => {
      const res = await made.ledger.app.inject({ url });
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      assert.equal(res.json().error.param, param, url);
    };
    await err('/v1/agents/nobody-here/performance/outcomes', 404, 'handle');
    for (const limit of ['0', '501', 'x', '1e2', '-1']) await err(`/v1/agents/${handle}/performance/outcomes?limit=${limit}`, 400, 'limit');
    for (const cursor of ['nope', 'b3V0Y29tZXM6LTE', Buffer.from('outcomes:1.5').toString('base64url'), 'a'.repeat(41), '%2F%2F']) {
      await err(`/v1/agents/${handle}/performance/outcomes?cursor=${cursor}`, 400, 'cursor');
    }
    await err(`/v1/agents/${handle}/performance/outcomes?portfolio=broker`, 400, 'portfolio');
    await err(`/v1/agents/${handle}/performance/outcomes?format=xml`, 400, 'format');
    await err(`/v1/agents/${handle}/performance/outcomes?page=2`, 400, 'page');
  });

  it('an agent with no decision priced: every outcome null with the report\'s reason', async () => {
    const created = await new Operators(store, made.clock).createAgent({ handle: `fresh-${kind.name}` });
    assert.ok(created.ok);
    const empty = await get(`/v1/agents/fresh-${kind.name}/performance/outcomes`);
    assert.deepEqual({ data: empty.data, has_more: empty.has_more, status: empty.status }, { data: [], has_more: false, status: 'unavailable' });
    const res = await postDecision(made.ledger, created.value.apiKey.secret, { symbol: 'MSFT', action: 'SELL', time_horizon: '3 months' }, idempotencyKey());
    assert.equal(res.statusCode, 201);
    made.clock.t += DAY;
    const one = await get(`/v1/agents/fresh-${kind.name}/performance/outcomes`);
    assert.equal(one.data.length, 1);
    assert.equal(one.data[0].stated.parsed.kind, 'months');
    assert.match(one.data[0].stated.outcome.reason, /awaiting its price/);
  });

  it('a stretch missing from the close cache is completed from the provider, to the same rows', async () => {
    const full = await walk(500);
    // The cache loses AAPL's closes of a month (until they are saved again).
    let refilled = false;
    const lossy = new Proxy(store.market, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (key === 'closes') {
          return async (source: 'synthetic', symbol: string, from: string, to: string): Promise<StoredClose[]> => {
            const list = await target.closes(source, symbol, from, to);
            return symbol === 'AAPL' && !refilled ? list.filter((c) => c.date < '2025-05-01' || c.date > '2025-05-31') : list;
          };
        }
        if (key === 'saveCloses') {
          return async (source: 'synthetic', symbol: string, closes: StoredClose[], fetchedAt: string) => {
            if (symbol === 'AAPL') refilled = true;
            return target.saveCloses(source, symbol, closes, fetchedAt);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as MarketStore;
    const service = new PerformanceService({ store, market: lossy, reports: store.performance, provider, synthetic: provider, benchmark: 'SPY', clock: made.clock });
    const agent = (await store.findAgentByHandle(handle))!;
    const bars = provider.bars;
    const rows = [];
    for (let after = 0, more = true; more;) {
      const page = await service.outcomes(agent, after, 500);
      assert.ok(page.ok);
      rows.push(...page.value.rows);
      after = page.value.lastSeq;
      more = page.value.hasMore;
    }
    assert.ok(refilled && provider.bars > bars, 'the hole was fetched from the provider');
    assert.deepEqual(JSON.parse(JSON.stringify(rows)), full);
  });

  it('a close beyond the first stretch read (a six-week trading halt) is found, as outcomes.ts and the report find it', async () => {
    const created = await new Operators(store, made.clock).createAgent({ handle: `halt-${kind.name}` });
    assert.ok(created.ok);
    made.clock.t = Date.UTC(2025, 1, 24, 15, 0, 0);
    const horizons = ['1 week', '30 trading days', '2 weeks', null, '1 month', 'P3M'];
    for (let i = 0; i < 24; i++) {
      const body: Record<string, string> = { symbol: 'HALT', action: i % 3 === 2 ? 'SELL' : 'BUY', quantity: '1' };
      if (horizons[i % 6]) body.time_horizon = horizons[i % 6] as string;
      const res = await postDecision(made.ledger, created.value.apiKey.secret, body, idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      made.clock.t += (i < 5 ? 1 : 3) * DAY;
    }
    await observeDecisions(store, made.market, provider, created.value.agent.id);
    made.clock.t = Date.UTC(2025, 6, 1, 15, 0, 0);
    const perf = (await made.ledger.app.inject({ url: `/v1/agents/halt-${kind.name}/performance` })).json();
    assert.equal(perf.status, 'computed');
    const page = await get(`/v1/agents/halt-${kind.name}/performance/outcomes?limit=500`);
    const rows = page.data as Row[];
    const inputs: DecisionInput[] = rows.map((r) => ({ id: r.record_id, recorded_at: r.recorded_at, symbol: r.symbol, action: r.action, time_horizon: r.stated.horizon, price: r.price }));
    const expected = decisionOutcomes(inputs, await closesFor(provider, ['HALT'], '2025-02-01', perf.as_of));
    for (const [i, e] of expected.entries()) {
      const r = rows[i]!;
      assert.deepEqual({ ...r.outcomes['21d'], reason: undefined }, { ...cellOf(e.at[21], e.action), reason: undefined }, r.record_id);
      assert.deepEqual({ ...r.stated.outcome, reason: undefined }, { ...cellOf(e.stated.outcome, e.action), reason: undefined }, r.record_id);
    }
    assert.ok(rows.some((r) => r.outcomes['1d'].date > '2025-04-13' && r.date < '2025-03-03'), 'a 1-close outcome after the halt');
    for (const h of ['1d', '5d', '21d', 'stated']) {
      const counted = rows.map((r) => (h === 'stated' ? r.stated.outcome : r.outcomes[h])).filter((c) => c.hit !== null);
      assert.deepEqual({ hits: counted.filter((c) => c.hit).length, counted: counted.length }, { hits: perf.hit_rate[h].hits, counted: perf.hit_rate[h].counted }, h);
    }
  });
});
