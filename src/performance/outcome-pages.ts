// The published decision outcomes of perf_v1 (GET /v1/agents/{handle}/performance/outcomes): each
// decision of the chain, a page at a time in chain order, with its return from the receipt price
// at 1, 5 and 21 closes and at its stated horizon (rules of outcomes.ts), against the closes of the
// model report's source up to the report's as_of, so that the rows add up to its hit rates.
// Computed on read, never stored: a page reads its decisions' terms and observations (never their
// content: the priced_decisions projection, or the terms read out of it in SQL) and, per symbol,
// only the stretches of closes its outcomes can end in (a few weeks after each decision, a few
// days from each calendar horizon's end), from the close cache the report filled. A stretch the
// cache does not hold whole (a gap of more than MAX_GAP_DAYS) is completed through DailyCloses, by
// the rule the report's own computation followed. Work and bytes grow with the page, not the chain.
// It owns the page, its cursor and the reasons an outcome is null.

import { dayNumber, plusDays } from '../method/perf/calendar.ts';
import { MAX_GAP_DAYS, type DailyCloses } from '../market/closes.ts';
import type { MarketData, MarketStore, PricedDecision, PriceSource } from '../market/port.ts';
import type { LedgerStore } from '../store/port.ts';
import { csvBoolean, csvDocument, csvNumber, csvText, type CsvCell } from './csv.ts';
import { decisionOf } from '../method/perf/inputs.ts';
import { Dec } from '../method/perf/numbers.ts';
import { OUTCOME_HORIZONS, addToDate, directionOf, outcomeAt, parseHorizon, type Horizon, type OutcomeValue } from '../method/perf/outcomes.ts';
import { utcDate, type Close, type DecisionInput } from '../method/perf/portfolio.ts';

export const OUTCOMES_LIMIT = { default: 100, max: 500 };
/**
 * Past the observed prefix, records read for one page at most (executions are skipped), and the
 * content the database reads there at most (for the terms of decisions not observed yet): a page
 * may end short, with has_more.
 */
export const SCAN_LIMIT = 5_000;
export const TAIL_CONTENT_BYTES = 2 * 1024 * 1024;
const READ_PAGE = 1_000;
/** Calendar days after a decision read for n closes: n trading days, weekends, holidays. */
const spanFor = (n: number) => Math.ceil((n * 7) / 5) + 10;
/** Calendar days read from a calendar horizon's end for its first close. */
const CALENDAR_SLACK = 10;

export type OutcomeCell = { date: string | null; close: string | null; return: string | null; hit: boolean | null; reason: string | null };

export type OutcomeRow = {
  record_id: string;
  seq: number;
  symbol: string;
  action: string;
  recorded_at: string;
  /** recorded_at's UTC date: closes dated after it count. */
  date: string;
  price: string | null;
  price_reason: string | null;
  direction: 1 | -1 | 0;
  outcomes: Record<'1d' | '5d' | '21d', OutcomeCell>;
  stated: { horizon: string | null; parsed: Horizon | null; outcome: OutcomeCell };
};

/** What the page's closes come from: the model report's provider and as_of, or why there are none. */
export type OutcomeBasis = { provider: MarketData; source: PriceSource; asOf: string | null } | { reason: string };

export type OutcomePage = { rows: OutcomeRow[]; lastSeq: number; hasMore: boolean };

export type OutcomeDeps = { store: LedgerStore; market: MarketStore; closes: DailyCloses };

const AWAITING = 'awaiting its price at receipt (the pricing job observes it shortly after it is recorded)';

/** The cursor of the page after `seq`: opaque to clients, a chain seq inside. */
export function outcomeCursor(seq: number): string {
  return Buffer.from(`outcomes:${seq}`).toString('base64url');
}

/** The chain seq a cursor stands for, or null when it is not one this service wrote. */
export function seqOfCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return null;
  const m = /^outcomes:(0|[1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) return null;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) ? seq : null;
}

/** Up to `limit` decisions of the agent with seq > afterSeq, with their outcomes through the basis's as_of. */
export async function outcomePage(deps: OutcomeDeps, agentId: string, basis: OutcomeBasis, afterSeq: number, limit: number): Promise<OutcomePage> {
  const head = (await deps.store.chainHead(agentId)).seq;
  const { decisions, lastSeq } = await scan(deps.market, agentId, afterSeq, head, limit);
  const closes = 'reason' in basis || basis.asOf === null ? null : await readCloses(deps, basis.provider, basis.source, basis.asOf, decisions.map((x) => x.input));
  const rows = decisions.map(({ seq, input }) => rowOf(seq, input, basis, closes));
  return { rows, lastSeq, hasMore: lastSeq < head };
}

type PageDecision = { seq: number; input: DecisionInput };

/**
 * The page's decisions as accounting inputs, from narrow reads that return no content: the
 * observed prefix of the chain from the priced_decisions projection, the rest through chainTerms
 * (the projection too, or the terms of a decision not observed yet read out of it in SQL).
 */
async function scan(market: MarketStore, agentId: string, afterSeq: number, head: number, limit: number) {
  const decisions: PageDecision[] = [];
  let lastSeq = afterSeq;
  const prefix = afterSeq < head ? await market.observedPrefix(agentId, head) : 0;
  while (lastSeq < prefix && decisions.length < limit) {
    const want = Math.min(READ_PAGE, limit - decisions.length);
    const priced = await market.pricedDecisions(agentId, lastSeq, prefix, want);
    for (const d of priced) decisions.push({ seq: d.chainSeq, input: decisionOf(d.id, d.recordedAt, d.terms, d.observation) });
    lastSeq = priced.length < want ? prefix : (priced[priced.length - 1] as PricedDecision).chainSeq;
  }
  let scanned = 0;
  let bytes = 0;
  while (lastSeq < head && decisions.length < limit && scanned < SCAN_LIMIT && bytes < TAIL_CONTENT_BYTES) {
    const records = await market.chainTerms(agentId, lastSeq, Math.min(READ_PAGE, SCAN_LIMIT - scanned, head - lastSeq), TAIL_CONTENT_BYTES - bytes);
    if (records.length === 0) break;
    for (const r of records) {
      if (r.chainSeq > head) return { decisions, lastSeq };
      scanned++;
      bytes += r.contentBytes;
      lastSeq = r.chainSeq;
      if (r.terms !== null) decisions.push({ seq: r.chainSeq, input: decisionOf(r.id, r.recordedAt, r.terms, r.observation ?? { status: 'unpriced', reason: AWAITING }) });
      if (decisions.length === limit) return { decisions, lastSeq };
    }
  }
  return { decisions, lastSeq };
}

// ---------------------------------------------------------------------------------------------
// Closes: per symbol, the stretches the page's outcomes can end in.

/** A close to find: the n-th dated after `after`, or the first dated on or after `from`. */
type Need = { kind: 'count'; after: string; n: number } | { kind: 'date'; from: string };
type Stretch = { from: string; to: string; closes: Close[] };
type SymbolCloses = { stretches: Stretch[]; error: string | null };

const minDate = (a: string, b: string) => (a < b ? a : b);

function needsOf(d: DecisionInput): Need[] {
  if (d.price === null || new Dec(d.price).lte(0)) return [];
  const date = utcDate(d.recorded_at);
  const needs: Need[] = OUTCOME_HORIZONS.map((n) => ({ kind: 'count', after: date, n }));
  const stated = parseHorizon(d.time_horizon);
  if (stated?.kind === 'trading_days') needs.push({ kind: 'count', after: date, n: stated.n });
  else if (stated) needs.push({ kind: 'date', from: addToDate(date, stated) });
  return needs;
}

/** The dates a need's close is looked for in first. */
function windowOf(need: Need): { from: string; to: string } {
  return need.kind === 'count'
    ? { from: plusDays(need.after, 1), to: plusDays(need.after, spanFor(need.n)) }
    : { from: need.from, to: plusDays(need.from, CALENDAR_SLACK) };
}

/** Merged, date-ordered windows, cut at asOf. */
function merge(windows: Array<{ from: string; to: string }>, asOf: string): Array<{ from: string; to: string }> {
  const sorted = windows.map((w) => ({ from: w.from, to: minDate(w.to, asOf) })).filter((w) => w.from <= w.to).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const out: Array<{ from: string; to: string }> = [];
  for (const w of sorted) {
    const last = out[out.length - 1];
    if (last && w.from <= plusDays(last.to, 1)) last.to = w.to > last.to ? w.to : last.to;
    else out.push({ ...w });
  }
  return out;
}

async function readCloses(deps: OutcomeDeps, provider: MarketData, source: PriceSource, asOf: string, decisions: DecisionInput[]): Promise<Map<string, SymbolCloses>> {
  const needs = new Map<string, Need[]>();
  for (const d of decisions) {
    const list = needsOf(d);
    if (list.length === 0) continue;
    const known = needs.get(d.symbol);
    if (known) known.push(...list);
    else needs.set(d.symbol, list);
  }
  const out = new Map<string, SymbolCloses>();
  for (const [symbol, list] of needs) {
    const got: SymbolCloses = { stretches: [], error: null };
    const read = async (w: { from: string; to: string }) => {
      const stretch = await readStretch(deps, provider, source, symbol, w);
      if (typeof stretch === 'string') got.error ??= stretch;
      else got.stretches.push(stretch);
    };
    for (const w of merge(list.map(windowOf), asOf)) await read(w);
    // A close beyond its first window (a long closure, many trading days): read on to asOf.
    const beyond = list.filter((n) => find(got.stretches, n, asOf) === 'beyond').map((n) => windowOf(n).from).sort()[0];
    if (beyond !== undefined && got.error === null) await read({ from: beyond, to: asOf });
    out.set(symbol, got);
  }
  return out;
}

/** The stored closes of a stretch; completed through DailyCloses when the store has a gap in it. */
async function readStretch(deps: OutcomeDeps, provider: MarketData, source: PriceSource, symbol: string, w: { from: string; to: string }): Promise<Stretch | string> {
  const stored = await deps.market.closes(source, symbol, w.from, w.to);
  if (whole(stored, w)) return { ...w, closes: stored };
  const got = await deps.closes.get(provider, symbol, w.from, w.to);
  if (!got.ok) return `closes of ${symbol} unavailable: ${got.error.code}: ${got.error.message}`;
  return { ...w, closes: got.value };
}

/** No gap of more than MAX_GAP_DAYS from the stretch's start, between closes, or to its end (DailyCloses' rule). */
function whole(closes: Close[], w: { from: string; to: string }): boolean {
  let cursor = dayNumber(w.from);
  for (const c of closes) {
    const day = dayNumber(c.date);
    if (day - cursor > MAX_GAP_DAYS) return false;
    cursor = day + 1;
  }
  return dayNumber(w.to) - cursor < MAX_GAP_DAYS;
}

/** The close resolving `need` among the stretches read, 'pending' when none can exist by asOf yet, 'beyond' when it lies past them. */
function find(stretches: Stretch[], need: Need, asOf: string): Close | 'pending' | 'beyond' {
  const start = need.kind === 'count' ? plusDays(need.after, 1) : need.from;
  if (start > asOf) return 'pending';
  // The latest stretch holding the need's start: one read on to asOf covers it whole.
  const s = stretches.filter((x) => x.from <= start && start <= x.to).sort((a, b) => (a.to < b.to ? 1 : -1))[0];
  if (!s) return 'beyond';
  const i = firstOnOrAfter(s.closes, start);
  const close = s.closes[need.kind === 'count' ? i + need.n - 1 : i];
  if (close) return close;
  return s.to >= asOf ? 'pending' : 'beyond';
}

/** Index of the first close dated on or after `date` (closes in date order). */
function firstOnOrAfter(closes: Close[], date: string): number {
  let lo = 0;
  let hi = closes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((closes[mid] as Close).date < date) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---------------------------------------------------------------------------------------------
// Rows

function cell(v: OutcomeValue, direction: 1 | -1 | 0): OutcomeCell {
  if (v.date === null) return { date: null, close: null, return: null, hit: null, reason: v.reason };
  return { date: v.date, close: v.close, return: v.return, hit: v.hit, reason: direction === 0 ? 'HOLD has no direction: never a hit or a miss' : null };
}

const nullCell = (reason: string): OutcomeCell => ({ date: null, close: null, return: null, hit: null, reason });

function rowOf(seq: number, d: DecisionInput, basis: OutcomeBasis, closes: Map<string, SymbolCloses> | null): OutcomeRow {
  const direction = directionOf(d.action);
  const date = utcDate(d.recorded_at);
  const price = d.price === null ? null : new Dec(d.price);
  const parsed = parseHorizon(d.time_horizon);
  const priceReason = d.price === null ? (d.price_missing_reason === AWAITING ? AWAITING : `no price at receipt: ${d.price_missing_reason ?? 'unpriced'}`) : null;
  const at = (need: Need, pending: string): OutcomeCell => {
    if (price === null) return nullCell(priceReason as string);
    if ('reason' in basis) return cell(outcomeAt(price, direction, undefined, `no closes: ${basis.reason}`), direction);
    if (basis.asOf === null) return cell(outcomeAt(price, direction, undefined, 'pending: no day valued yet'), direction);
    const got = closes?.get(d.symbol);
    if (got?.error && price.gt(0)) return nullCell(got.error);
    const found = got ? find(got.stretches, need, basis.asOf) : 'pending';
    return cell(outcomeAt(price, direction, typeof found === 'string' ? undefined : found, `${pending} through ${basis.asOf}`), direction);
  };
  const count = (n: number) => at({ kind: 'count', after: date, n }, `pending: fewer than ${n} closes of ${d.symbol} after ${date}`);
  let stated: OutcomeCell;
  if (parsed === null) stated = nullCell(d.time_horizon ? 'time_horizon not understood' : 'no time_horizon');
  else if (parsed.kind === 'trading_days') stated = count(parsed.n);
  else {
    const end = addToDate(date, parsed);
    stated = at({ kind: 'date', from: end }, `pending: no close of ${d.symbol} on or after ${end}`);
  }
  return {
    record_id: d.id,
    seq,
    symbol: d.symbol,
    action: d.action,
    recorded_at: d.recorded_at,
    date,
    price: d.price,
    price_reason: priceReason,
    direction,
    outcomes: { '1d': count(1), '5d': count(5), '21d': count(21) },
    stated: { horizon: d.time_horizon ?? null, parsed, outcome: stated },
  };
}

export const OUTCOME_CSV_COLUMNS = [
  'record_id', 'seq', 'symbol', 'action', 'recorded_at', 'price', 'price_reason', 'direction',
  ...(['1d', '5d', '21d'] as const).flatMap((h) => ['date', 'close', 'return', 'hit', 'reason'].map((f) => `${h}_${f}`)),
  'stated_horizon', 'stated_parsed', 'stated_date', 'stated_close', 'stated_return', 'stated_hit', 'stated_reason',
] as const;

const cellFields = (c: OutcomeCell): CsvCell[] => [csvText(c.date), csvNumber(c.close), csvNumber(c.return), csvBoolean(c.hit), csvText(c.reason)];

/**
 * One CSV line per row (csv.ts: RFC 4180, CRLF): OUTCOME_CSV_COLUMNS; a null is an empty field.
 * Numbers the service formats (seq, price, direction, closes, returns) are number cells; the rest,
 * the agent's symbol and time_horizon first, are text cells, neutralised against formulas.
 */
export function outcomesCsv(rows: OutcomeRow[]): string {
  return csvDocument(OUTCOME_CSV_COLUMNS, rows.map((r) => {
    const parsed = r.stated.parsed === null ? null : `${r.stated.parsed.n} ${r.stated.parsed.kind}`;
    return [
      csvText(r.record_id), csvNumber(r.seq), csvText(r.symbol), csvText(r.action), csvText(r.recorded_at),
      csvNumber(r.price), csvText(r.price_reason), csvNumber(r.direction),
      ...cellFields(r.outcomes['1d']), ...cellFields(r.outcomes['5d']), ...cellFields(r.outcomes['21d']),
      csvText(r.stated.horizon), csvText(parsed), ...cellFields(r.stated.outcome),
    ];
  }));
}
