// Portfolio reconstruction of perf_v1: the model portfolio from decisions (priced at receipt) and
// the broker portfolio from executions (trade-derived), both valued daily at the close.
// It owns the accounting rules of every action and edge, and the daily valuation. Pure: no I/O.
// The rules are written out in docs/perf_v1.md; each edge leaves a note, never a silent drop.

import { ROUND_DOWN } from './exact.ts';
import { Dec, cutQuantity, decimalOf, money, parseDec, plain, type Dec as D } from './numbers.ts';

export const START_VALUE = '100000';
/** An unsized BUY or INCREASE buys this share of the portfolio's value. */
export const UNSIZED_BUY_PCT = '10';

export type Action = 'BUY' | 'SELL' | 'HOLD' | 'INCREASE' | 'REDUCE' | 'CLOSE';
export type Close = { date: string; close: string };

export type DecisionInput = {
  id: string;
  recorded_at: string;
  symbol: string;
  action: Action;
  target_allocation_pct?: string | null;
  quantity?: string | null;
  notional?: string | null;
  time_horizon?: string | null;
  /** The price observed at receipt (rule 6), or null when none could be had. */
  price: string | null;
  /** Why there is no price (provider none, unknown symbol, ...). */
  price_missing_reason?: string | null;
};

export type FillInput = {
  id: string;
  executed_at: string;
  symbol: string;
  side: 'buy' | 'sell';
  quantity: string;
  price: string;
  fee?: string | null;
};

export type NoteCode =
  | 'unpriced'
  | 'unsized_default'
  | 'sizing_ignored'
  | 'invalid_size'
  | 'buy_clipped_to_cash'
  | 'no_cash'
  | 'sell_clipped_to_holding'
  | 'nothing_held'
  | 'target_already_met'
  | 'negative_cash'
  | 'short_position';

export type Note = { record_id: string; code: NoteCode; message: string };

/** What one decision or fill did to the portfolio. */
export type Applied = {
  record_id: string;
  at: string;
  symbol: string;
  action: string;
  price: string | null;
  sizing: 'target_allocation_pct' | 'quantity' | 'notional' | 'default' | 'all' | 'none';
  /** Signed: positive bought, negative sold; "0" when nothing traded. */
  traded_quantity: string;
  cash_after: string;
  position_after: string;
  notes: NoteCode[];
};

export type SeriesPoint = { date: string; value: string };

export type Reconstruction = {
  inception: string | null;
  start_value: string;
  /** Published daily values at the close (2 decimals). */
  values: SeriesPoint[];
  applied: Applied[];
  notes: Note[];
  cash: string;
  positions: Array<{ symbol: string; quantity: string; mark: string }>;
};

type Holding = { qty: D; mark: D };

/** Zero, shared: decimals are immutable. */
const ZERO = new Dec(0);

/** A book as plain text, exactly: what a resumable computation (engine.ts) stores between runs. */
export type BookState = {
  cash: string;
  invested: string;
  holdings: Array<[symbol: string, quantity: string, mark: string]>;
  /** perf_v2: dividends accrued and not yet paid, and fractions awaiting their cash in lieu (absent while zero). */
  receivable?: string;
};

/** Cash, holdings and their running value (Σ quantity × mark, kept exact and incremental). */
export class Book {
  cash: D;
  readonly holdings = new Map<string, Holding>();
  private invested = new Dec(0);
  /** perf_v2: dividends accrued not yet paid, plus fractions of shares awaiting their cash in lieu. */
  receivable: D = ZERO;

  constructor(start: D) {
    this.cash = start;
  }

  /** The running sum is kept as it was, not recomputed, so a restored book values to the last digit as the original. */
  static restore(state: BookState): Book {
    const book = new Book(new Dec(state.cash));
    book.invested = new Dec(state.invested);
    for (const [symbol, qty, mark] of state.holdings) book.holdings.set(symbol, { qty: new Dec(qty), mark: new Dec(mark) });
    if (state.receivable !== undefined) book.receivable = new Dec(state.receivable);
    return book;
  }

  snapshot(): BookState {
    const state: BookState = { cash: plain(this.cash), invested: plain(this.invested), holdings: [...this.holdings].map(([s, h]) => [s, plain(h.qty), plain(h.mark)]) };
    if (!this.receivable.isZero()) state.receivable = plain(this.receivable);
    return state;
  }

  value(): D {
    return this.receivable.isZero() ? this.cash.plus(this.invested) : this.cash.plus(this.invested).plus(this.receivable);
  }

  /**
   * perf_v2: `num` new shares for `den` held (a split or a stock dividend), before the open. The
   * new quantity is cut towards zero to `places` decimals; the mark is divided by the ratio, so the
   * value is unchanged but for the cut fraction, which is returned (with the new mark) to be paid
   * in cash in lieu. A holding cut to zero is removed.
   */
  rebase(symbol: string, num: D, den: D, places: number): { before: D; after: D; fraction: D; mark: D } {
    const h = this.holdings.get(symbol) as Holding;
    const before = h.qty;
    const exact = before.times(num).div(den);
    const after = exact.toDecimalPlaces(places, ROUND_DOWN);
    const mark = h.mark.times(den).div(num);
    this.invested = this.invested.minus(before.times(h.mark)).plus(after.times(mark));
    h.qty = after;
    h.mark = mark;
    if (after.isZero()) this.holdings.delete(symbol);
    return { before, after, fraction: exact.minus(after), mark };
  }

  quantity(symbol: string): D {
    return this.holdings.get(symbol)?.qty ?? ZERO;
  }

  mark(symbol: string, price: D): void {
    const h = this.holdings.get(symbol);
    if (!h || h.mark === price) return;
    this.invested = this.invested.plus(h.qty.times(price.minus(h.mark)));
    h.mark = price;
  }

  /** Trades `qty` (signed) at `price`, less `fee` in cash. */
  trade(symbol: string, qty: D, price: D, fee: D = ZERO): void {
    let h = this.holdings.get(symbol);
    if (!h) {
      h = { qty: new Dec(0), mark: price };
      this.holdings.set(symbol, h);
    }
    this.mark(symbol, price);
    h.qty = h.qty.plus(qty);
    const cost = qty.times(price);
    this.invested = this.invested.plus(cost);
    this.cash = fee === ZERO ? this.cash.minus(cost) : this.cash.minus(cost).minus(fee);
    if (h.qty.isZero()) this.holdings.delete(symbol);
  }
}

type Event = { at: string; date: string; apply: (book: Book) => void };

const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The UTC date of an RFC 3339 instant (read off the text when it is already UTC). */
export function utcDate(instant: string): string {
  if (UTC_INSTANT.test(instant)) return instant.slice(0, 10);
  return new Date(Date.parse(instant)).toISOString().slice(0, 10);
}

/**
 * Applies events in time order and values the book at the close of every calendar date from the
 * first event's date on: events of a date (UTC) are applied before that date's valuation.
 */
function valueDaily(events: Event[], start: D, calendar: string[], closes: Record<string, Close[]>): { book: Book; values: SeriesPoint[] } {
  const book = new Book(start);
  const closeOf = new Map<string, Map<string, string>>();
  for (const [symbol, list] of Object.entries(closes)) closeOf.set(symbol, new Map(list.map((c) => [c.date, c.close])));
  const values: SeriesPoint[] = [];
  const first = events[0];
  let next = 0;
  if (first !== undefined) {
    for (const date of calendar) {
      if (date < first.date) continue;
      while (next < events.length && (events[next] as Event).date <= date) (events[next++] as Event).apply(book);
      for (const symbol of [...book.holdings.keys()]) {
        const close = closeOf.get(symbol)?.get(date);
        if (close !== undefined) book.mark(symbol, new Dec(close));
      }
      values.push({ date, value: money(book.value()) });
    }
  }
  while (next < events.length) (events[next++] as Event).apply(book);
  return { book, values };
}

export function positionsOf(book: Book) {
  return [...book.holdings.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([symbol, h]) => ({ symbol, quantity: plain(h.qty), mark: plain(h.mark) }));
}

/** Decisions sorted by recorded_at, then id (the chain's own order for equal instants). */
export function sortDecisions(decisions: DecisionInput[]): DecisionInput[] {
  return [...decisions].sort((a, b) => (a.recorded_at !== b.recorded_at ? (a.recorded_at < b.recorded_at ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The model portfolio: every decision applied at its receipt price from START_VALUE in cash. */
export function reconstructModel(decisions: DecisionInput[], calendar: string[], closes: Record<string, Close[]>): Reconstruction {
  const applied: Applied[] = [];
  const notes: Note[] = [];
  const ordered = sortDecisions(decisions);
  const events: Event[] = ordered.map((d) => ({
    at: d.recorded_at,
    date: utcDate(d.recorded_at),
    apply: (book) => {
      const result = applyDecision(book, d);
      applied.push(result.applied);
      for (const n of result.notes) notes.push({ record_id: d.id, ...n });
    },
  }));
  const { book, values } = valueDaily(events, new Dec(START_VALUE), calendar, closes);
  return { inception: ordered[0]?.recorded_at ?? null, start_value: money(new Dec(START_VALUE)), values, applied, notes, cash: plain(book.cash), positions: positionsOf(book) };
}

export type Outcome = { applied: Applied; notes: Array<{ code: NoteCode; message: string }> };

/** What a decision did, before it is written out as an Applied row. */
export type Effect = { sizing: Applied['sizing']; traded: D; price: D | null; notes: LazyNote[] };
/** A note whose message is written only when shown (most are only counted). */
export type LazyNote = { code: NoteCode; message: () => string };


/** One decision, by the rules of docs/perf_v1.md §2. */
export function applyDecision(book: Book, d: DecisionInput): Outcome {
  const e = decisionEffect(book, d);
  return {
    applied: {
      record_id: d.id,
      at: d.recorded_at,
      symbol: d.symbol,
      action: d.action,
      price: e.price === null ? null : plain(e.price),
      sizing: e.sizing,
      traded_quantity: plain(e.traded),
      cash_after: plain(book.cash),
      position_after: plain(book.quantity(d.symbol)),
      notes: e.notes.map((n) => n.code),
    },
    notes: e.notes.map((n) => ({ code: n.code, message: n.message() })),
  };
}

/** applyDecision without the Applied row: the book changes, and what changed it. */
export function decisionEffect(book: Book, d: DecisionInput): Effect {
  const notes: Effect['notes'] = [];
  const price = decimalOf(d.price);
  if (price === null || price.lte(0)) {
    notes.push({ code: 'unpriced', message: () => `not applied: no price at receipt (${d.price_missing_reason ?? 'none recorded'})` });
    return { sizing: 'none', traded: ZERO, price: null, notes };
  }
  book.mark(d.symbol, price);

  const given = sizesGiven(d);
  if (d.action === 'HOLD' || d.action === 'CLOSE') {
    if (given.length > 0) notes.push({ code: 'sizing_ignored', message: () => `${d.action} ignores ${given.join(', ')}` });
    if (d.action === 'HOLD') return { sizing: 'none', traded: ZERO, price, notes };
    const held = book.quantity(d.symbol);
    if (held.lte(0)) {
      notes.push({ code: 'nothing_held', message: () => `CLOSE of ${d.symbol}, which is not held` });
      return { sizing: 'all', traded: ZERO, price, notes };
    }
    book.trade(d.symbol, held.neg(), price);
    return { sizing: 'all', traded: held.neg(), price, notes };
  }

  const sizing = given[0] ?? null;
  if (given.length > 1) notes.push({ code: 'sizing_ignored', message: () => `sized by ${sizing}; ${given.slice(1).join(', ')} ignored` });
  const buying = d.action === 'BUY' || d.action === 'INCREASE';
  const held = book.quantity(d.symbol);
  let wanted: D; // quantity to buy (buying) or to sell (selling), before clipping
  if (sizing === null) {
    if (buying) wanted = cutQuantity(book.value().times(UNSIZED_BUY_PCT).div(100).div(price));
    else wanted = d.action === 'SELL' ? held : cutQuantity(held.div(2));
    const rule = buying ? `${UNSIZED_BUY_PCT} % of the portfolio's value` : d.action === 'SELL' ? 'the whole holding' : 'half the holding';
    notes.push({ code: 'unsized_default', message: () => `no size given: ${d.action} of ${rule}` });
  } else {
    const amount = parseDec(d[sizing]);
    if (amount === null || amount.lt(0) || (sizing === 'target_allocation_pct' && amount.gt(100))) {
      notes.push({ code: 'invalid_size', message: () => `${sizing} ${JSON.stringify(d[sizing])} cannot size a trade` });
      return { sizing, traded: ZERO, price, notes };
    }
    if (sizing === 'quantity') wanted = amount;
    else if (sizing === 'notional') wanted = cutQuantity(amount.div(price));
    else {
      const target = cutQuantity(book.value().times(amount).div(100).div(price));
      wanted = buying ? target.minus(held) : held.minus(target);
      if (wanted.lte(0)) {
        notes.push({ code: 'target_already_met', message: () => `${d.action} to ${plain(amount)} % needs no ${buying ? 'purchase' : 'sale'}: holding ${plain(held)}, target ${plain(target)}` });
        return { sizing, traded: ZERO, price, notes };
      }
    }
  }
  const used = sizing ?? 'default';
  return buying ? buy(book, d, wanted, price, used, notes) : sell(book, d, wanted, held, price, used, notes);
}

const SIZES = ['target_allocation_pct', 'quantity', 'notional'] as const;

/** The sizes a decision carries, in the order that picks the one used. */
function sizesGiven(d: DecisionInput): Array<(typeof SIZES)[number]> {
  const given: Array<(typeof SIZES)[number]> = [];
  for (const f of SIZES) if (d[f] !== null && d[f] !== undefined) given.push(f);
  return given;
}

function buy(book: Book, d: DecisionInput, wanted: D, price: D, sizing: Applied['sizing'], notes: Effect['notes']): Effect {
  let qty = wanted;
  if (book.cash.lte(0)) {
    notes.push({ code: 'no_cash', message: () => `no cash to buy ${plain(wanted)} ${d.symbol}` });
    return { sizing, traded: ZERO, price, notes };
  }
  let clipped: (() => string) | null = null;
  if (qty.times(price).gt(book.cash)) {
    const cash = book.cash;
    const bought = (qty = cutQuantity(cash.div(price)));
    clipped = () => `wanted ${plain(wanted)}, cash ${plain(cash)} buys ${plain(bought)}`;
  }
  if (qty.gt(0)) book.trade(d.symbol, qty, price);
  if (clipped !== null) notes.push({ code: 'buy_clipped_to_cash', message: clipped });
  return { sizing, traded: qty, price, notes };
}

function sell(book: Book, d: DecisionInput, wanted: D, held: D, price: D, sizing: Applied['sizing'], notes: Effect['notes']): Effect {
  if (held.lte(0)) {
    notes.push({ code: 'nothing_held', message: () => `${d.action} of ${d.symbol}, which is not held (no short sales)` });
    return { sizing, traded: ZERO, price, notes };
  }
  let qty = wanted;
  let clipped: (() => string) | null = null;
  if (qty.gt(held)) {
    qty = held;
    clipped = () => `wanted to sell ${plain(wanted)}, held ${plain(held)}`;
  }
  if (qty.gt(0)) book.trade(d.symbol, qty.neg(), price);
  if (clipped !== null) notes.push({ code: 'sell_clipped_to_holding', message: clipped });
  return { sizing, traded: qty.neg(), price, notes };
}

/** Fills sorted by executed_at, then id. */
export function sortFills(fills: FillInput[]): FillInput[] {
  return [...fills].sort((a, b) => (a.executed_at !== b.executed_at ? (a.executed_at < b.executed_at ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Broker notes said once per portfolio: cash below zero, and each symbol gone short. */
export type FillFlags = { cashNoted: boolean; shortNoted: Set<string> };

/** One fill, exactly as reported, by the rules of docs/perf_v1.md §3. */
export function applyFill(book: Book, f: FillInput, flags: FillFlags): Outcome {
  const qty = parseDec(f.quantity);
  const price = parseDec(f.price);
  const fee = parseDec(f.fee ?? '0') ?? new Dec(0);
  const notes: Outcome['notes'] = [];
  const invalid = qty === null || price === null || qty.lte(0) || price.lte(0);
  if (invalid) {
    notes.push({ code: 'invalid_size', message: `fill with quantity ${f.quantity} at ${f.price} not applied` });
  } else {
    book.trade(f.symbol, f.side === 'buy' ? qty : qty.neg(), price, fee);
    if (book.cash.lt(0) && !flags.cashNoted) {
      flags.cashNoted = true;
      notes.push({ code: 'negative_cash', message: 'cash below zero: the account held money the imported trades do not show' });
    }
    if (book.quantity(f.symbol).lt(0) && !flags.shortNoted.has(f.symbol)) {
      flags.shortNoted.add(f.symbol);
      notes.push({ code: 'short_position', message: `${f.symbol} sold beyond the imported holding (short, or bought before the import)` });
    }
  }
  return {
    applied: {
      record_id: f.id,
      at: f.executed_at,
      symbol: f.symbol,
      action: f.side,
      price: price === null ? null : plain(price),
      sizing: 'quantity',
      traded_quantity: invalid ? '0' : plain(f.side === 'buy' ? qty : qty.neg()),
      cash_after: plain(book.cash),
      position_after: plain(book.quantity(f.symbol)),
      notes: notes.map((n) => n.code),
    },
    notes,
  };
}

/**
 * The broker portfolio, trade-derived (rule 7): fills applied exactly as reported from an opening
 * value in cash (START_VALUE unless the caller knows the account's opening equity). Deposits,
 * withdrawals and dividends are not known; cash may go negative and positions short, each noted once.
 */
export function reconstructBroker(fills: FillInput[], calendar: string[], closes: Record<string, Close[]>, openingValue: string = START_VALUE): Reconstruction {
  const applied: Applied[] = [];
  const notes: Note[] = [];
  const ordered = sortFills(fills);
  const flags: FillFlags = { cashNoted: false, shortNoted: new Set() };
  const events: Event[] = ordered.map((f) => ({
    at: f.executed_at,
    date: utcDate(f.executed_at),
    apply: (book) => {
      const result = applyFill(book, f, flags);
      applied.push(result.applied);
      for (const n of result.notes) notes.push({ record_id: f.id, ...n });
    },
  }));
  const start = parseDec(openingValue) ?? new Dec(START_VALUE);
  const { book, values } = valueDaily(events, start, calendar, closes);
  return { inception: ordered[0]?.executed_at ?? null, start_value: money(start), values, applied, notes, cash: plain(book.cash), positions: positionsOf(book) };
}
