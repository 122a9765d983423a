// `ledger verify --performance <agent URL>`: computes an agent's performance reports again from their
// inputs bundles (GET /v1/agents/{handle}/performance/inputs, format perf_inputs_v1) with the
// documented method (docs/perf_v1.md §8) and compares every figure with the published reports,
// naming the first one that differs.
// It is responsible for reading a bundle, the recomputation from it, the comparison. It trusts only
// the bundle and the published report: the accounting is the pure engine of the method
// (src/method/perf/engine.ts and the modules it is made of: no I/O, no job), fed the bundle's
// records, closes and actions. Before it computes, the bundle is bound to the agent: its agent,
// portfolio and synthetic label are the report's, and its records are the agent's own chain's
// through the report's through_seq, the chain in the global log (inputs-chain.ts).
import { closesStoredBefore, savesOfCloses, type ActionInput } from '../method/perf/actions.ts';
import { historyVerdict, timeWeightedView, type ActivityInput } from '../method/perf/broker-history.ts';
import { tradeDerivedActions, uncoveredForTimeWeighted } from '../method/perf/holding-actions.ts';
import { INPUTS_FORMAT, type ActionLine, type CloseLine, type EndLine, type InputsHeader, type RecordLine } from '../method/perf/bundle.ts';
import { advance, publish, startState, type BenchmarkReturn, type Portfolio, type PublishedReport } from '../method/perf/engine.ts';
import { decisionOf, fillInput, termsOf } from '../method/perf/inputs.ts';
import { benchmarkBase } from '../method/perf/perf.ts';
import { utcDate, type Close, type DecisionInput, type FillInput } from '../method/perf/portfolio.ts';
import { nestedDeeperThan } from '../core/json.ts';
import { boundedFetch, DEFAULT_BOUNDS, MAX_JSON_NESTING, type VerifyBounds } from './bounds.ts';
import { APPLIED_TYPES, bindingOfRecords, chainThrough, firstFailure, throughSeqInLog } from './inputs-chain.ts';

export type Bundle = { header: InputsHeader; records: RecordLine[]; actions: ActionLine[]; closes: Map<string, CloseLine[]>; end: EndLine };

/** A bundle's text (or its lines as they come), checked for its shape: a header first, an end line whose counts match last. */
export async function readBundle(lines: AsyncIterable<string> | Iterable<string>): Promise<Bundle> {
  let header: InputsHeader | null = null;
  let end: EndLine | null = null;
  const records: RecordLine[] = [];
  const actions: ActionLine[] = [];
  const closes = new Map<string, CloseLine[]>();
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    if (end !== null) throw new Error(`line ${n}: after the end line`);
    let value: { object?: string; kind?: string };
    if (nestedDeeperThan(text, MAX_JSON_NESTING)) throw new Error(`line ${n}: nests JSON deeper than ${MAX_JSON_NESTING} levels`);
    try {
      value = JSON.parse(text) as typeof value;
    } catch {
      throw new Error(`line ${n}: not JSON`);
    }
    if (header === null) {
      if (value.object !== 'performance_inputs' || (value as InputsHeader).format !== INPUTS_FORMAT) throw new Error(`line 1 is not a ${INPUTS_FORMAT} header`);
      header = value as InputsHeader;
      continue;
    }
    switch (value.kind) {
      case 'record': records.push(value as RecordLine); break;
      case 'corporate_action': actions.push(value as ActionLine); break;
      case 'close': {
        const c = value as CloseLine;
        const list = closes.get(c.symbol) ?? [];
        if (list.length > 0 && list[list.length - 1]!.date >= c.date) throw new Error(`line ${n}: closes of ${c.symbol} out of date order`);
        list.push(c);
        closes.set(c.symbol, list);
        break;
      }
      case 'end': end = value as EndLine; break;
      default: throw new Error(`line ${n}: unknown kind ${JSON.stringify(value.kind)}`);
    }
  }
  if (header === null) throw new Error('empty bundle');
  if (end === null) throw new Error('no end line: the bundle was cut short');
  const closeCount = [...closes.values()].reduce((sum, l) => sum + l.length, 0);
  if (end.records !== records.length || end.corporate_actions !== actions.length || end.closes !== closeCount) {
    throw new Error(`the end line counts ${end.records} records, ${end.corporate_actions} actions, ${end.closes} closes; the bundle holds ${records.length}, ${actions.length}, ${closeCount}`);
  }
  return { header, records, actions, closes, end };
}

const chainInput = (r: RecordLine) => ({ chainSeq: r.chain_seq, id: r.id, type: r.type, recordedAt: r.recorded_at, symbol: r.symbol, content: r.content, observation: r.observation });

/** The report computed from scratch from the bundle, as the service publishes it (caveats of the engine alone). */
export function recompute(b: Bundle, basis: BenchmarkReturn = 'total'): PublishedReport {
  const h = b.header;
  if (h.method !== 'perf_v2') throw new Error(`method ${h.method}: only perf_v2 is computed again from a bundle`);
  if (h.as_of === null || h.closes_from.symbols === null) throw new Error('the bundle\'s report values no day');
  const decisions: DecisionInput[] = [];
  const fills: FillInput[] = [];
  const activities: ActivityInput[] = [];
  for (const r of b.records) {
    if (r.type === 'decision') {
      if (r.observation === null) throw new Error(`decision ${r.id} has no observation: the report cannot have applied it`);
      decisions.push(decisionOf(r.id, r.recorded_at, termsOf(chainInput(r)), r.observation));
    } else if (r.type === 'activity') activities.push({ ...(JSON.parse(r.content) as Omit<ActivityInput, 'id'>), id: r.id });
    else fills.push(fillInput(chainInput(r)));
  }
  const firstAt = h.portfolio === 'model' ? decisions[0]?.recorded_at : fills.map((f) => f.executed_at).sort()[0];
  if (firstAt === undefined) throw new Error('the bundle holds no record');
  const inception = utcDate(firstAt);
  const through = h.as_of;
  const valued = (list: CloseLine[] | undefined, from: string): Close[] => (list ?? []).filter((c) => c.date >= from && c.date <= through).map((c) => ({ date: c.date, close: c.close }));
  const closes: Record<string, Close[]> = {};
  for (const [symbol, list] of b.closes) closes[symbol] = valued(list, inception);
  const benchmark = valued(b.closes.get(h.benchmark.symbol), h.closes_from.benchmark ?? inception);
  const base = benchmarkBase({ symbol: h.benchmark.symbol, closes: benchmark, inception_price: h.benchmark.inception_price }, inception);
  const given: ActionInput[] = b.actions.map((a) => ({
    provider_id: a.provider_id, type: a.type, symbol: a.symbol, ex_date: a.ex_date, payable_date: a.payable_date, process_date: a.process_date,
    old_rate: a.old_rate, new_rate: a.new_rate, rate: a.rate, special: a.special, seen_at: a.seen_at,
  }));
  const market = closesStoredBefore(given, (symbol) => savesOfCloses(b.closes.get(symbol) ?? []));
  const actions = h.portfolio === 'broker' ? tradeDerivedActions(activities, market) : market;
  const start = startState(h.portfolio, h.benchmark.symbol, h.start_value, 'perf_v2');
  const got = advance(start, {
    ...(h.portfolio === 'model' ? { decisions } : { fills }), through, benchmark: benchmark.filter((c) => c.date >= inception), benchmarkBase: base, closes, actions,
  });
  if (!got.ok) throw new Error(`the engine refused the bundle: ${got.message}`);
  const complete = h.portfolio === 'broker' && historyVerdict(fills, activities).complete;
  const time_weighted = complete ? timeWeightedView(fills, activities, got.state.series.map((row) => row[0]), closes, uncoveredForTimeWeighted(activities, market)) : null;
  return publish(got.state, { synthetic: h.synthetic, caveats: [] }, null, { benchmark_return: basis, time_weighted, ...(h.actions_known === undefined ? {} : { actions_known: h.actions_known }) });
}

/** What of a published performance document is compared (every figure; caveats are text, restatement and events are compared as data). */
type Published = {
  status: string; reason?: string; agent?: unknown; portfolio: Portfolio; method: string; basis?: string; through_seq: number; as_of: string | null; inception: string | null; start_value: string;
  synthetic?: unknown;
  series: unknown[]; metrics: unknown; benchmark: unknown; hit_rate: unknown; records: unknown; notes: unknown; corporate_actions?: unknown; restatement?: unknown;
  holdings: { cash: string; receivable?: string; positions: Array<{ symbol: string }>; positions_total: number };
};

/**
 * The first figure of `published` that differs from the recomputed report, as `path: published X,
 * recomputed Y` (the corporate-action events and the restatement first, then the series day by day,
 * the metrics, the benchmark, the hit rates, the holdings, the counts and the notes); null when all agree.
 */
export function firstDifference(published: Published, r: PublishedReport): string | null {
  const top: Array<[string, unknown, unknown]> = [
    ['method', published.method, r.method], ['basis', published.basis, r.basis], ['as_of', published.as_of, r.as_of], ['inception', published.inception, r.inception], ['start_value', published.start_value, r.start_value],
    ['corporate_actions', published.corporate_actions, r.corporate_actions], ['restatement', published.restatement, r.restatement ?? null],
    ['series', published.series, r.series], ['metrics', published.metrics, r.metrics], ['benchmark', published.benchmark, r.benchmark], ['hit_rate', published.hit_rate, r.hit_rate],
    ['holdings.cash', published.holdings.cash, r.holdings.cash], ['holdings.receivable', published.holdings.receivable, r.holdings.receivable],
    ['holdings.positions_total', published.holdings.positions_total, r.holdings.positions.length],
    ['records', published.records, r.records], ['notes', published.notes, r.notes],
  ];
  for (const [path, a, b] of top) {
    const d = diff(path === 'series' ? seriesPath : path, a, b);
    if (d !== null) return d;
  }
  const mine = new Map(r.holdings.positions.map((p) => [p.symbol, p]));
  for (const p of published.holdings.positions) {
    const d = diff(`holdings.positions[${p.symbol}]`, p, mine.get(p.symbol));
    if (d !== null) return d;
  }
  return null;
}

const seriesPath = 'series';

const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));

/** The first place where `a` and `b` differ, depth first in `b`'s key order, or null. */
function diff(path: string, a: unknown, b: unknown): string | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const row = b[i] as { date?: unknown } | null;
      const at = path === seriesPath && row !== null && typeof row === 'object' && typeof row.date === 'string' ? `${path}[${i}] (${row.date})` : `${path}[${i}]`;
      const d = diff(at, a[i], b[i]);
      if (d !== null) return d;
    }
    return a.length === b.length ? null : `${path}: published ${a.length} entries, recomputed ${b.length}`;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const key of new Set([...Object.keys(bo), ...Object.keys(ao)])) {
      const d = diff(`${path}.${key}`, ao[key], bo[key]);
      if (d !== null) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: published ${show(a)}, recomputed ${show(b)}`;
}

// ---------------------------------------------------------------------------------------------
// Over HTTP

/** The service's root and the agent's handle, from a site URL (`/agents/<handle>`) or an API URL (`/v1/agents/<handle>...`). */
export function agentOf(url: string): { root: string; handle: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const m = /^(.*?)(?:\/v1)?\/agents\/([^/?#]+)/.exec(u.pathname);
  if (!m) return null;
  return { root: `${u.origin}${m[1]}`, handle: decodeURIComponent(m[2]!) };
}

/** A response body's lines as they arrive. */
async function* linesOf(res: Response): AsyncGenerator<string> {
  if (res.body === null) return;
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, i);
      rest = rest.slice(i + 1);
    }
  }
  rest += decoder.decode();
  if (rest !== '') yield rest;
}

class Unverifiable extends Error {}

/**
 * Why the inputs are not the report's own, or null: a recomputation proves something only of the
 * agent, portfolio and labels its inputs say, so those must be the report's (an inputs bundle of
 * another agent, or one labelled real beside a synthetic report, would otherwise pass).
 */
function bindingProblem(handle: string, portfolio: Portfolio, h: InputsHeader, report: Published): string | null {
  if (report.agent !== handle) return `the report is of agent ${JSON.stringify(report.agent)}, not ${JSON.stringify(handle)} whose URL was given`;
  if (report.portfolio !== portfolio) return `the report is of the ${JSON.stringify(report.portfolio)} portfolio, not ${JSON.stringify(portfolio)} as asked`;
  if (h.agent !== handle) return `the inputs are of agent ${JSON.stringify(h.agent)}, not ${JSON.stringify(handle)} whose report this is`;
  if (h.portfolio !== portfolio) return `the inputs are of the ${JSON.stringify(h.portfolio)} portfolio, the report of ${JSON.stringify(portfolio)}`;
  if (report.synthetic !== h.synthetic) return `the report says synthetic: ${JSON.stringify(report.synthetic)}, its inputs synthetic: ${JSON.stringify(h.synthetic)}`;
  return null;
}

/**
 * The inputs' records bound to the agent's chain, and the chain to the global log
 * (inputs-chain.ts): the lines to print, or why the inputs are not the agent's (naming the record).
 */
async function chainBinding(agent: { root: string; handle: string }, portfolio: Portfolio, bundle: Bundle, fetcher: typeof fetch): Promise<{ failure: string } | { lines: string[] }> {
  const through = bundle.header.through_seq;
  const chain = await chainThrough(agent.root, agent.handle, through, fetcher);
  if (!chain.verification.ok) return { failure: `the agent's chain does not verify through seq ${through}: ${firstFailure(chain.verification)}` };
  const unbound = bindingOfRecords(bundle.records, chain.records, portfolio, through);
  if (unbound !== null) return { failure: unbound };
  const last = chain.records.get(through);
  if (last === undefined) return { failure: `the agent's chain (head seq ${chain.head}) holds no record at the report's through_seq ${through}` };
  const log = await throughSeqInLog(agent.root, last, fetcher);
  if (log.ok === false) return { failure: `the global log: ${log.line}` };
  const types = APPLIED_TYPES[portfolio].join(' and ');
  return {
    lines: [
      `ok   chain of ${agent.handle}: seq 1 to ${through} verify (canon_v1 §5 checks 1-5); the ${bundle.records.length} input records are exactly its ${types} records through seq ${through}, each with the chain's id, type, recorded_at and content hash`,
      `${log.ok ? 'ok  ' : 'note'} log: ${log.line}`,
    ],
  };
}

async function getJson(fetcher: typeof fetch, url: string): Promise<Published> {
  const res = await fetcher(url, { headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Unverifiable(`${url}: HTTP ${res.status}`);
  const text = await res.text();
  if (nestedDeeperThan(text, MAX_JSON_NESTING)) throw new Unverifiable(`${url} nests JSON deeper than ${MAX_JSON_NESTING} levels`);
  return JSON.parse(text) as Published;
}

/**
 * Verifies the agent's published reports (model, and broker when it has one) against their
 * inputs, once the inputs are bound to the agent (its labels, its chain, the log): 0 when every
 * figure agrees, 1 naming the first label, record or figure at fault, 2 when nothing could be
 * verified (no report, the service unreachable, a bundle unreadable).
 */
export async function verifyPerformance(source: string, out: (line: string) => void, given: typeof fetch = fetch, bounds: VerifyBounds = DEFAULT_BOUNDS): Promise<number> {
  const agent = agentOf(source);
  if (agent === null) {
    out(`FAIL ${source} is not an agent's URL (<site>/agents/<handle> or <api>/v1/agents/<handle>)`);
    return 2;
  }
  const api = `${agent.root}/v1/agents/${encodeURIComponent(agent.handle)}/performance`;
  // A bundle is held whole to be computed again: every answer is bounded as a document.
  const bounded = boundedFetch(bounds, { streamNdjson: false, fetcher: given });
  const fetcher = bounded.fetch;
  let verified = 0;
  try {
    for (const portfolio of ['model', 'broker'] as const) {
      let report = await getJson(fetcher, `${api}?portfolio=${portfolio}`);
      if (report.status !== 'computed') {
        out(`performance ${portfolio}: no report to verify (${report.reason ?? report.status})`);
        continue;
      }
      const res = await fetcher(`${api}/inputs?portfolio=${portfolio}`, { headers: { accept: 'application/x-ndjson' } });
      if (res.status !== 200) throw new Unverifiable(`${api}/inputs: HTTP ${res.status}`);
      const bundle = await readBundle(linesOf(res));
      const h = bundle.header;
      if (h.through_seq !== report.through_seq || h.as_of !== report.as_of) report = await getJson(fetcher, `${api}?portfolio=${portfolio}`); // it moved on between the two reads
      if (h.through_seq !== report.through_seq || h.as_of !== report.as_of) {
        out(`FAIL performance ${portfolio}: the inputs are of the report through seq ${h.through_seq}, as of ${h.as_of}; the published one is through seq ${report.through_seq}, as of ${report.as_of}`);
        return 1;
      }
      const unbound = bindingProblem(agent.handle, portfolio, h, report);
      if (unbound !== null) {
        out(`FAIL performance ${portfolio}: ${unbound}`);
        return 1;
      }
      out(`performance ${portfolio} of ${agent.handle}: ${h.method}, through seq ${h.through_seq}, as of ${h.as_of}; ${bundle.records.length} records, ${bundle.actions.length} corporate actions, ${bundle.end.closes} closes`);
      const bound = await chainBinding(agent, portfolio, bundle, fetcher);
      if ('failure' in bound) {
        out(`FAIL performance ${portfolio}: ${bound.failure}`);
        return 1;
      }
      for (const line of bound.lines) out(line);
      for (const basis of ['total', 'price'] as const) {
        const published = basis === 'total' ? report : await getJson(fetcher, `${api}?portfolio=${portfolio}&benchmark_return=price`);
        if (published.through_seq !== h.through_seq || published.as_of !== h.as_of) throw new Unverifiable(`the ${basis}-return report moved on while it was read; run again`);
        const d = firstDifference(published, recompute(bundle, basis));
        if (d !== null) {
          out(`FAIL performance ${portfolio} (benchmark ${basis} return): ${d}`);
          return 1;
        }
      }
      out(`ok   performance ${portfolio}: every figure computed again from its inputs equals the published one (benchmark total and price return)`);
      verified++;
    }
  } catch (err) {
    out(`FAIL ${bounded.breach !== null ? bounded.breach : `${err instanceof Unverifiable ? '' : 'cannot verify: '}${(err as Error).message}`}`);
    return 2;
  } finally {
    bounded.close();
  }
  if (verified === 0) {
    out('FAIL nothing to verify: the agent has no performance report');
    return 2;
  }
  return 0;
}
