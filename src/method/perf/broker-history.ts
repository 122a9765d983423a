// The broker account's own history: its imported `activity` records (dividends, splits, deposits,
// withdrawals, fees...) beside its fills, and the time-weighted curve they allow.
// It owns what each broker activity code means to the curve (ACTIVITY_KINDS), the rule that says
// when the imported history is complete from a known starting balance (docs/perf_v1.md §3.1),
// and the time-weighted reconstruction: the account rebuilt from a zero balance, valued daily at
// the raw close, each day's return with that day's external flows (deposits, withdrawals)
// neutralised, chained into an index published as the growth of START_VALUE.
// Pure: no I/O; the caller reads the records.

import { effectiveDate, termsOf, ratioText, type ActionInput, type AppliedAction } from './actions.ts';
import { Dec, money, plain, ratio } from './numbers.ts';
import { Book, START_VALUE, positionsOf, sortFills, utcDate, type Close, type FillInput, type Note, type Reconstruction, type SeriesPoint } from './portfolio.ts';

/** An `activity` record as the curve reads it (docs/canon_v1.md §3.2). */
export type ActivityInput = {
  id: string;
  broker: string;
  account_ref: string;
  broker_activity_id: string;
  activity_type: string;
  activity_sub_type: string | null;
  status: string | null;
  symbol: string | null;
  quantity: string | null;
  amount: string | null;
  occurred_at: string;
};

/**
 * What an activity does to the account: an external flow in or out; cash income or expense (part
 * of the return); a change in the shares held (a split row: `quantity` is the signed change); or
 * nothing the method can apply (its meaning is undocumented or not cash: a transfer of securities,
 * a merger, a journal...), which leaves the history incomplete.
 */
export type ActivityKind = 'deposit' | 'withdrawal' | 'income' | 'expense' | 'shares' | 'not_applied';

const ALPACA: Record<string, ActivityKind> = {
  CSD: 'deposit', CSW: 'withdrawal',
  DIV: 'income', DIVCGL: 'income', DIVCGS: 'income', DIVROC: 'income', DIVTXEX: 'income', CGD: 'income', INT: 'income', PTR: 'income',
  DIVNRA: 'expense', DIVFT: 'expense', DIVTW: 'expense', DIVFEE: 'expense', INTNRA: 'expense', INTTW: 'expense', FEE: 'expense', CFEE: 'expense', PTC: 'expense',
  SPLIT: 'shares',
};
const SNAPTRADE: Record<string, ActivityKind> = {
  CONTRIBUTION: 'deposit', WITHDRAWAL: 'withdrawal',
  DIVIDEND: 'income', SUBSTITUTE_DIVIDEND: 'income', INTEREST: 'income',
  FEE: 'expense', TAX: 'expense',
};

/** The kind of an activity (see ActivityKind); every code not listed is `not_applied`. */
export function activityKind(a: Pick<ActivityInput, 'broker' | 'activity_type' | 'activity_sub_type'>): ActivityKind {
  if (a.broker === 'alpaca') {
    if (a.activity_type === 'DIV' && a.activity_sub_type === 'SDIV') return 'not_applied'; // stock dividend: the basis of its qty is undocumented
    if (a.activity_type === 'SPLIT' && a.activity_sub_type === 'USPLIT') return 'not_applied'; // unit split: a new security
    return ALPACA[a.activity_type] ?? 'not_applied';
  }
  if (a.broker === 'snaptrade') return SNAPTRADE[a.activity_type] ?? 'not_applied'; // SPLIT: the meaning of its units is undocumented
  return 'not_applied';
}

/** A dividend row: cash income of a symbol (Alpaca DIV family, SnapTrade DIVIDEND), with an amount. */
export function isDividendRow(a: ActivityInput): boolean {
  if (a.symbol === null || a.amount === null || activityKind(a) !== 'income') return false;
  return a.broker === 'alpaca' ? a.activity_type.startsWith('DIV') : a.activity_type === 'DIVIDEND' || a.activity_type === 'SUBSTITUTE_DIVIDEND';
}

/**
 * The activities in force: for each (account, broker id) the last recorded version (a correction
 * or cancellation is a later record of the same id); a cancelled one applies nothing.
 */
export function activitiesInForce(activities: ActivityInput[]): ActivityInput[] {
  const latest = new Map<string, ActivityInput>();
  for (const a of activities) latest.set(`${a.broker}\n${a.account_ref}\n${a.broker_activity_id}`, a); // records in chain order
  return [...latest.values()].filter((a) => a.status !== 'canceled');
}

export type HistoryVerdict =
  | { complete: true; opening: string; accounts: number }
  | { complete: false; missing: string[] };

const dateOf = (a: ActivityInput): string => (a.occurred_at.length === 10 ? a.occurred_at : utcDate(a.occurred_at));

/**
 * Whether the imported history is complete from a known starting balance (zero): activities were
 * imported; each account's first activity is a deposit (nothing happens in an account before it is
 * funded) and no fill comes before the first deposit; every activity is of a kind the method
 * applies, with the numbers it needs; no sale goes beyond the shares the history shows. Otherwise,
 * what is missing, in words.
 */
export function historyVerdict(fills: FillInput[], activities: ActivityInput[]): HistoryVerdict {
  const verdict = activityVerdict(activities, sortFills(fills)[0]?.executed_at ?? null);
  const short = shortSales(fills, activitiesInForce(activities));
  if (short.length === 0) return verdict;
  const missing = `shares sold beyond the imported holding (${short.join(', ')}): bought or transferred in before the import`;
  return { complete: false, missing: verdict.complete ? [missing] : [...verdict.missing, missing] };
}

/** historyVerdict without the holdings check: from the activities and the first fill's instant alone. */
export function activityVerdict(activities: ActivityInput[], firstFillAt: string | null): HistoryVerdict {
  const inForce = activitiesInForce(activities);
  if (inForce.length === 0) return { complete: false, missing: ['the account\'s deposits, withdrawals and dividends (none imported)'] };
  const missing: string[] = [];
  const accounts = new Map<string, ActivityInput[]>();
  for (const a of inForce) accounts.set(`${a.broker} account ${a.account_ref}`, [...(accounts.get(`${a.broker} account ${a.account_ref}`) ?? []), a]);
  for (const [account, list] of accounts) {
    const first = [...list].sort((x, y) => (dateOf(x) < dateOf(y) ? -1 : dateOf(x) > dateOf(y) ? 1 : 0))[0] as ActivityInput;
    const firstDate = dateOf(first);
    const sameDay = list.filter((a) => dateOf(a) === firstDate);
    if (!sameDay.some((a) => activityKind(a) === 'deposit')) {
      missing.push(`the opening balance of the ${account}: its history does not start with a deposit (first imported: ${first.activity_type} on ${firstDate})`);
    }
  }
  const firstDeposit = inForce.filter((a) => activityKind(a) === 'deposit').map(dateOf).sort()[0];
  if (firstFillAt !== null && firstDeposit !== undefined && utcDate(firstFillAt) < firstDeposit) {
    missing.push(`what funded the fills before the first deposit (${firstDeposit})`);
  }
  const unapplied = new Map<string, number>();
  for (const a of inForce) {
    const kind = activityKind(a);
    const usable = kind === 'not_applied' ? false : kind === 'shares' ? a.symbol !== null && a.quantity !== null : a.amount !== null;
    if (!usable) unapplied.set(`${a.broker} ${a.activity_type}${a.activity_sub_type ? `/${a.activity_sub_type}` : ''}`, (unapplied.get(`${a.broker} ${a.activity_type}${a.activity_sub_type ? `/${a.activity_sub_type}` : ''}`) ?? 0) + 1);
  }
  if (unapplied.size > 0) {
    missing.push(`the effect of activities the method cannot apply (${[...unapplied].map(([t, n]) => `${t} ×${n}`).join(', ')})`);
  }
  return missing.length === 0 ? { complete: true, opening: firstDeposit as string, accounts: accounts.size } : { complete: false, missing };
}

function shortSales(fills: FillInput[], activities: ActivityInput[]): string[] {
  const held = new Map<string, Dec>();
  const short = new Set<string>();
  for (const e of eventsOf(fills, activities)) {
    if (e.kind === 'market') continue;
    const delta = e.kind === 'fill' ? new Dec(e.fill.quantity).times(e.fill.side === 'buy' ? 1 : -1)
      : activityKind(e.activity) === 'shares' && e.activity.quantity !== null ? new Dec(e.activity.quantity) : null;
    const symbol = e.kind === 'fill' ? e.fill.symbol : e.activity.symbol;
    if (delta === null || symbol === null) continue;
    const q = (held.get(symbol) ?? new Dec(0)).plus(delta);
    held.set(symbol, q);
    if (q.lt(0)) short.add(symbol);
  }
  return [...short].sort();
}

type HistoryEvent =
  | { at: string; date: string; kind: 'fill'; fill: FillInput }
  | { at: string; date: string; kind: 'activity'; activity: ActivityInput }
  | { at: string; date: string; kind: 'market'; action: ActionInput };

const KIND_ORDER = { market: 0, activity: 1, fill: 2 } as const;

/**
 * Fills, activities and market actions in application order: by instant; an activity known by its
 * date, and a market action (on its effective date, before the open), apply at the start of that date.
 */
function eventsOf(fills: FillInput[], activities: ActivityInput[], market: ActionInput[] = []): HistoryEvent[] {
  const events: HistoryEvent[] = [
    ...market.filter((a) => effectiveDate(a) !== null).map((a): HistoryEvent => ({ at: `${effectiveDate(a)}T00:00:00Z`, date: effectiveDate(a) as string, kind: 'market', action: a })),
    ...activities.map((a): HistoryEvent => ({ at: a.occurred_at.length === 10 ? `${a.occurred_at}T00:00:00Z` : a.occurred_at, date: dateOf(a), kind: 'activity', activity: a })),
    ...sortFills(fills).map((f): HistoryEvent => ({ at: f.executed_at, date: utcDate(f.executed_at), kind: 'fill', fill: f })),
  ];
  const ms = (e: HistoryEvent) => Date.parse(e.at);
  return events.sort((x, y) => ms(x) - ms(y) || KIND_ORDER[x.kind] - KIND_ORDER[y.kind]);
}

export type TimeWeighted = Reconstruction & {
  /** The account's own value at each close (what it held), beside the published index. */
  account_values: SeriesPoint[];
  /** External flows by date (deposits positive, withdrawals negative), as neutralised. */
  flows: SeriesPoint[];
  /** Each day's return with that day's flows neutralised: V_d / (V_{d-1} + F_d) - 1. */
  daily_returns: SeriesPoint[];
  /** The splits and dividends applied to the holdings, each with its source (the account's rows, or the market's actions). */
  events: AppliedAction[];
};

/**
 * The time-weighted reconstruction (only for a complete history, historyVerdict): the account from
 * zero, each fill applied as reported, each activity as its kind says (cash in or out, shares
 * changed at the holding's mark), valued at every close of `calendar` from the first event on.
 * Flows are taken at the start of their day: r_d = V_d / (V_{d-1} + F_d) - 1 (0 when nothing was
 * invested: V_{d-1} + F_d <= 0). Published values: START_VALUE x prod(1 + r), 2 decimals.
 */
export function reconstructTimeWeighted(fills: FillInput[], activities: ActivityInput[], calendar: string[], closes: Record<string, Close[]>, market: ActionInput[] = []): TimeWeighted {
  const events = eventsOf(fills, activitiesInForce(activities), market);
  const applied: AppliedAction[] = [];
  const book = new Book(new Dec(0));
  const closeOf = new Map<string, Map<string, string>>();
  for (const [symbol, list] of Object.entries(closes)) closeOf.set(symbol, new Map(list.map((c) => [c.date, c.close])));
  const notes: Note[] = [];
  const marks = new Map<string, Dec>();
  const values: SeriesPoint[] = [];
  const accountValues: SeriesPoint[] = [];
  const flows: SeriesPoint[] = [];
  const returns: SeriesPoint[] = [];
  let index = new Dec(1);
  let previous = new Dec(0);
  let next = 0;
  const first = events[0];
  for (const date of first === undefined ? [] : calendar.filter((d) => d >= first.date)) {
    let flow = new Dec(0);
    for (; next < events.length && (events[next] as HistoryEvent).date <= date; next++) flow = flow.plus(apply(book, events[next] as HistoryEvent, notes, marks, applied));
    for (const symbol of [...book.holdings.keys()]) {
      const close = closeOf.get(symbol)?.get(date);
      if (close !== undefined) book.mark(symbol, new Dec(close));
    }
    const value = book.value();
    const invested = previous.plus(flow);
    const r = invested.lte(0) ? new Dec(0) : value.div(invested).minus(1);
    index = index.times(r.plus(1));
    previous = value;
    values.push({ date, value: money(index.times(START_VALUE)) });
    accountValues.push({ date, value: money(value) });
    returns.push({ date, value: ratio(r) });
    if (!flow.isZero()) flows.push({ date, value: money(flow) });
  }
  for (; next < events.length; next++) apply(book, events[next] as HistoryEvent, notes, marks, applied);
  return {
    inception: first?.at ?? null, start_value: money(new Dec(START_VALUE)), values, applied: [], notes, cash: plain(book.cash),
    positions: positionsOf(book), account_values: accountValues, flows, daily_returns: returns, events: applied,
  };
}

/**
 * The time-weighted curve of a broker report valued on `dates` (its series' dates, from the day of
 * its first fill) with the account it rebuilt: what the service publishes and `ledger verify
 * --performance` recomputes (engine.ts TimeWeightedView). Only for a complete history.
 */
export function timeWeightedView(fills: FillInput[], activities: ActivityInput[], dates: string[], closes: Record<string, Close[]>, market: ActionInput[] = []) {
  const rec = reconstructTimeWeighted(fills, activities, dates, closes, market);
  return { values: rec.values, cash: rec.cash, positions: rec.positions, notes: rec.notes, events: rec.events };
}

/**
 * Applies one event to the book; returns the external flow it makes (0 but for deposits and
 * withdrawals). `marks`: the last mark of each symbol, so a split's ADD row finds the price its
 * REMOVE row left (the REMOVE empties the holding).
 */
function apply(book: Book, e: HistoryEvent, notes: Note[], marks: Map<string, Dec>, applied: AppliedAction[]): Dec {
  if (e.kind === 'market') {
    applyMarket(book, e.action, applied);
    return new Dec(0);
  }
  if (e.kind === 'fill') {
    const qty = new Dec(e.fill.quantity);
    book.trade(e.fill.symbol, e.fill.side === 'buy' ? qty : qty.neg(), new Dec(e.fill.price), e.fill.fee ? new Dec(e.fill.fee) : undefined);
    return new Dec(0);
  }
  const a = e.activity;
  const kind = activityKind(a);
  if (kind === 'shares' && a.symbol !== null && a.quantity !== null) {
    const mark = book.holdings.get(a.symbol)?.mark ?? marks.get(a.symbol);
    if (mark === undefined) {
      notes.push({ record_id: a.id, code: 'invalid_size', message: `${a.activity_type} of ${a.symbol} with no holding to apply it to` });
      return new Dec(0);
    }
    const delta = new Dec(a.quantity);
    const before = book.quantity(a.symbol);
    marks.set(a.symbol, mark);
    book.trade(a.symbol, delta, mark);
    book.cash = book.cash.plus(delta.times(mark)); // shares change, no cash moves; the close re-marks them
    noteSplitRow(applied, a, dateOf(a), before, book.quantity(a.symbol), plain(book.cash));
    return new Dec(0);
  }
  if (kind === 'not_applied' || a.amount === null) return new Dec(0);
  const amount = new Dec(a.amount);
  const cashBefore = plain(book.cash);
  book.cash = book.cash.plus(amount);
  if (isDividendRow(a)) {
    const qty = plain(book.quantity(a.symbol as string));
    applied.push({ date: dateOf(a), phase: 'payable', symbol: a.symbol as string, type: 'cash_dividend', provider_id: `account:${a.id}`, ratio: null, rate: null, quantity_before: qty, quantity_after: qty, cash_before: cashBefore, cash_after: plain(book.cash), amount: plain(amount), source: 'account' });
  }
  return kind === 'deposit' || kind === 'withdrawal' ? amount : new Dec(0);
}

/**
 * A split row of the account as an applied event: the rows of one symbol and date (Alpaca's REMOVE
 * and ADD) make one event, its ratio the shares in to the shares out.
 */
function noteSplitRow(applied: AppliedAction[], a: ActivityInput, date: string, before: Dec, after: Dec, cash: string): void {
  const last = applied.at(-1);
  const same = last !== undefined && last.source === 'account' && last.phase === 'ex' && last.symbol === a.symbol && last.date === date;
  const first = same ? new Dec(last.quantity_before) : before;
  const ids = same ? [...last.provider_id.slice('account:'.length).split('+'), a.id].sort() : [a.id];
  const event: AppliedAction = {
    date, phase: 'ex', symbol: a.symbol as string, type: after.gte(first) ? 'forward_split' : 'reverse_split', provider_id: `account:${ids.join('+')}`,
    ratio: first.isZero() ? null : `${plain(after)}:${plain(first)}`, rate: null, quantity_before: plain(first), quantity_after: plain(after),
    cash_before: cash, cash_after: cash, amount: null, source: 'account',
  };
  if (same) applied[applied.length - 1] = event;
  else applied.push(event);
}

/**
 * A market action no account row covers (holding-actions.ts), on the holding before the day's
 * open: a split re-bases it (a fraction left by a reverse split paid in cash at the re-based mark),
 * a cash dividend is counted into cash on its ex-date (the account's value is the same as with the
 * dividend receivable until its pay date). An action of a symbol not held changes nothing.
 */
function applyMarket(book: Book, a: ActionInput, applied: AppliedAction[]): void {
  if (!book.holdings.has(a.symbol)) return;
  const terms = termsOf(a);
  if (terms.kind === 'none') return;
  const date = effectiveDate(a) as string;
  const cash = plain(book.cash);
  const base = { date, phase: 'ex' as const, symbol: a.symbol, type: a.type, provider_id: a.provider_id, source: 'market' as const };
  if (terms.kind === 'cash') {
    const qty = book.quantity(a.symbol);
    const amount = terms.fixed ?? qty.times(terms.rate);
    book.cash = book.cash.plus(amount);
    applied.push({ ...base, ratio: null, rate: plain(terms.rate), quantity_before: plain(qty), quantity_after: plain(qty), cash_before: cash, cash_after: plain(book.cash), amount: plain(amount) });
    return;
  }
  const r = book.rebase(a.symbol, terms.num, terms.den, terms.places);
  const inLieu = r.fraction.times(r.mark);
  book.cash = book.cash.plus(inLieu);
  applied.push({
    ...base, ratio: ratioText(a), rate: a.type === 'stock_dividend' ? a.rate : null, quantity_before: plain(r.before), quantity_after: plain(r.after),
    cash_before: cash, cash_after: plain(book.cash), amount: inLieu.isZero() ? null : plain(inLieu),
  });
}
