// Where each split and dividend of a broker report's holdings comes from (docs/perf_v1.md §4.2):
// the account's own activity rows where the report's method can apply them, else the market's
// corporate actions. One partition, computed here and nowhere else: every market action of a
// holding is either covered by one account event (and left to it) or not (and applied from the
// market), so no split or dividend is applied twice and none is dropped.
// It owns what an account split or dividend event is (per method), the window that pairs it with a
// market action, and the account events as actions the trade-derived engine applies. Pure.

import { effectiveDate, factKey, latestVersions, payDate, type ActionInput } from './actions.ts';
import { activitiesInForce, activityKind, isDividendRow, type ActivityInput } from './broker-history.ts';
import { Dec, parseDec, plain } from './numbers.ts';
import { utcDate } from './portfolio.ts';

/** Where an applied split or dividend came from. */
export type ActionSource = 'account' | 'market';

/** The curve the events are applied to: the trade-derived book (engine.ts) or the time-weighted account (broker-history.ts). */
export type HoldingBasis = 'trade_derived' | 'time_weighted';

/** A split or dividend as the account reported it: the rows it is made of. */
export type AccountEvent = { kind: 'split' | 'dividend'; symbol: string; date: string; rows: ActivityInput[] };

/** Days either side of a market split's ex-date an account's split rows may be dated. */
const SPLIT_WINDOW = 3;
/** Days before a dividend's ex-date and after its pay date an account's dividend row may be dated. */
const DIVIDEND_WINDOW = { before: 3, after: 7 };

const SPLIT_TYPES = new Set(['forward_split', 'reverse_split']);
const dateOf = (a: ActivityInput) => (a.occurred_at.length === 10 ? a.occurred_at : utcDate(a.occurred_at));
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;
const plus = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * The account's split and dividend events the method applies: dividend rows one by one; split
 * rows grouped by symbol and date (Alpaca reports a split as a REMOVE row and an ADD row). The
 * time-weighted curve applies any split row with a quantity; the trade-derived book applies a
 * ratio to the holdings it imported, so only a group with both rows (old shares out, new in).
 */
export function accountEvents(activities: ActivityInput[], basis: HoldingBasis): AccountEvent[] {
  const events: AccountEvent[] = [];
  const splits = new Map<string, AccountEvent>();
  for (const a of activitiesInForce(activities)) {
    if (isDividendRow(a)) events.push({ kind: 'dividend', symbol: a.symbol as string, date: dateOf(a), rows: [a] });
    else if (activityKind(a) === 'shares' && a.symbol !== null && a.quantity !== null) {
      const key = `${a.broker}\n${a.account_ref}\n${a.symbol}\n${dateOf(a)}`;
      const group = splits.get(key);
      if (group) group.rows.push(a);
      else splits.set(key, { kind: 'split', symbol: a.symbol, date: dateOf(a), rows: [a] });
    }
  }
  for (const group of splits.values()) if (basis === 'time_weighted' || splitRatio(group) !== null) events.push(group);
  return events.sort((x, y) => (x.date < y.date ? -1 : x.date > y.date ? 1 : x.symbol < y.symbol ? -1 : x.symbol > y.symbol ? 1 : 0));
}

/** A split group's shares out and in (`old`, `new`), or null without both. */
function splitRatio(e: AccountEvent): { old: Dec; new: Dec } | null {
  let out = new Dec(0);
  let into = new Dec(0);
  for (const r of e.rows) {
    const q = parseDec(r.quantity);
    if (q === null) return null;
    if (q.lt(0)) out = out.minus(q);
    else into = into.plus(q);
  }
  return out.gt(0) && into.gt(0) ? { old: out, new: into } : null;
}

/** Whether an account event can stand for a market action: same symbol, same kind, dated within the window. */
function pairs(e: AccountEvent, a: ActionInput): boolean {
  const on = effectiveDate(a);
  if (on === null || e.symbol !== a.symbol) return false;
  if (e.kind === 'split') return SPLIT_TYPES.has(a.type) && e.date >= plus(on, -SPLIT_WINDOW) && e.date <= plus(on, SPLIT_WINDOW);
  return a.type === 'cash_dividend' && e.date >= plus(on, -DIVIDEND_WINDOW.before) && e.date <= plus(payDate(a, on), DIVIDEND_WINDOW.after);
}

export const accountEventId = (e: AccountEvent) => `account:${e.rows.map((r) => r.id).sort().join('+')}`;

/**
 * The market actions an account event covers: provider id -> the account event's id. Each account
 * event covers at most one action (the nearest in date, on the version in force) and each action
 * is covered at most once, so the two sources partition the events.
 */
export function coverage(events: AccountEvent[], market: ActionInput[]): Map<string, string> {
  const covered = new Map<string, string>();
  const inForce = [...latestVersions(market).values()].filter((a) => a.origin !== 'account');
  for (const e of events) {
    const distance = (a: ActionInput) => Math.abs(dayNumber(effectiveDate(a) as string) - dayNumber(e.date));
    const candidates = inForce.filter((a) => !covered.has(a.provider_id) && pairs(e, a)).sort((x, y) => distance(x) - distance(y) || (x.provider_id < y.provider_id ? -1 : 1));
    const chosen = candidates[0];
    if (chosen !== undefined) covered.set(chosen.provider_id, accountEventId(e));
  }
  return covered;
}

/** An account event as an action the trade-derived engine applies (source `account`). */
function asAction(e: AccountEvent): ActionInput {
  const seen = e.rows.map((r) => r.occurred_at).sort()[0] as string;
  const base = {
    provider_id: accountEventId(e), symbol: e.symbol, ex_date: e.date, payable_date: e.date, process_date: e.date, special: null,
    seen_at: seen.length === 10 ? `${seen}T00:00:00Z` : seen, close_stored_at: null, origin: 'account' as const, covered_by: null,
  };
  if (e.kind === 'split') {
    const r = splitRatio(e) as { old: Dec; new: Dec };
    return { ...base, type: r.new.gte(r.old) ? 'forward_split' : 'reverse_split', old_rate: plain(r.old), new_rate: plain(r.new), rate: null, amount: null };
  }
  const row = e.rows[0] as ActivityInput;
  const qty = parseDec(row.quantity);
  const amount = new Dec(row.amount as string);
  // cash per share held when the row says how many shares it paid on; else the cash as reported
  const perShare = qty !== null && !qty.isZero() ? plain(amount.div(qty.abs())) : null;
  return { ...base, type: 'cash_dividend', old_rate: null, new_rate: null, rate: perShare, amount: perShare === null ? plain(amount) : null };
}

/**
 * The actions a trade-derived broker report applies: the market's (every version, each marked
 * with the account event that covers it, if any) and the account's own events as actions.
 */
export function tradeDerivedActions(activities: ActivityInput[], market: ActionInput[]): ActionInput[] {
  const events = accountEvents(activities, 'trade_derived');
  const covered = coverage(events, market);
  const marked = market.filter((a) => a.origin !== 'account').map((a) => ({ ...a, origin: 'market' as const, covered_by: covered.get(a.provider_id) ?? null }));
  return [...marked, ...events.map(asAction)];
}

/** The market actions the time-weighted curve applies: those of its holdings no account event covers (versions in force). */
export function uncoveredForTimeWeighted(activities: ActivityInput[], market: ActionInput[]): ActionInput[] {
  const covered = coverage(accountEvents(activities, 'time_weighted'), market);
  return [...latestVersions(market.filter((a) => a.origin !== 'account')).values()].filter((a) => !covered.has(a.provider_id));
}

/**
 * Whether a broker state's actions (`applied`) are all in `actions` as they are now (same fact, same origin,
 * covered by the same account event): otherwise an account event arrived (or was corrected) that
 * changes which source applies an action already applied, and the report is computed from scratch.
 */
export function keepsActions(applied: readonly ActionInput[], actions: ActionInput[]): boolean {
  const now = new Map(actions.map((a) => [factKey(a), a]));
  return applied.every((a) => {
    const b = now.get(factKey(a));
    return b !== undefined && (b.origin ?? 'market') === (a.origin ?? 'market') && (b.covered_by ?? null) === (a.covered_by ?? null);
  });
}
