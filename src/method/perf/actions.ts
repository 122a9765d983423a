// Corporate actions as perf_v2 reads them: the performance wing's own input type (the market wing's
// CorporateAction maps onto it field by field), the dates an action takes effect on, the order of
// actions on one date, which version of a provider's action is in force, and whether an action
// arriving now restates what is already valued.
// It owns those rules (docs/perf_v1.md §4.2). Pure: no I/O, no clock. The accounting that applies
// an action to a book is in engine.ts, beside the valuation it interleaves with.

import { Dec, parseDec } from './numbers.ts';

/** The types perf_v2 applies; any other type touching a holding leaves it as it is, with a caveat. */
export const APPLIED_TYPES = ['cash_dividend', 'stock_dividend', 'forward_split', 'reverse_split'] as const;
export type AppliedType = (typeof APPLIED_TYPES)[number];

/**
 * A corporate action as the performance wing needs it (a subset of the market wing's
 * CorporateAction, plus when the ledger learned it). Decimals are text, dates `YYYY-MM-DD`.
 */
export type ActionInput = {
  /** The provider's id: a later fact with the same id is a correction that supersedes it. */
  provider_id: string;
  /** 'forward_split' | 'reverse_split' | 'cash_dividend' | 'stock_dividend' | any other string (kept, not applied). */
  type: string;
  symbol: string;
  ex_date: string | null;
  payable_date: string | null;
  process_date: string | null;
  /** Splits: `new_rate` new shares for `old_rate` old ones. */
  old_rate: string | null;
  new_rate: string | null;
  /** Cash dividends: cash per share; stock dividends: extra shares per share. */
  rate: string | null;
  special?: boolean | null;
  /** When the ledger learned this fact (RFC 3339). */
  seen_at: string;
  /**
   * When the ledger first stored a raw close of `symbol` dated on or after the action's effective
   * date, if that was before `seen_at`: a report could then value that date without the action, so
   * applying it restates the report. Null (or absent): the action was known before any close it
   * changes (closesStoredBefore computes it from the stored closes).
   */
  close_stored_at?: string | null;
  /**
   * Broker reports (holding-actions.ts): `account` for a split or dividend the account reported
   * (provider_id `account:<record ids>`), `market` for the provider's. Absent: market.
   */
  origin?: 'account' | 'market';
  /** A market action an account event stands for (its id): the book takes it from the account, the benchmark still from the market. */
  covered_by?: string | null;
  /** An account dividend that does not say the shares it paid on: the cash as reported, in place of rate x holding. */
  amount?: string | null;
};

/** Order of actions sharing a date: cash dividends on the holding at the previous close first, then share changes. */
const RANK: Record<string, number> = { cash_dividend: 0, stock_dividend: 1, forward_split: 2, reverse_split: 3 };
const rankOf = (type: string) => RANK[type] ?? 4;

/** The date an action takes effect (before that day's open): its ex-date, else its process date, else its payable date. */
export function effectiveDate(a: ActionInput): string | null {
  return a.ex_date ?? a.process_date ?? a.payable_date ?? null;
}

/** The date a cash dividend is paid into cash: its payable date (else process date), never before its ex-date. */
export function payDate(a: ActionInput, effective: string): string {
  const pay = a.payable_date ?? a.process_date ?? effective;
  return pay < effective ? effective : pay;
}

/** A fact's identity: the provider's id and when the ledger learned it. */
export const factKey = (a: ActionInput) => `${a.provider_id}\n${a.seen_at}`;

const cmpText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** The canonical order of a state's actions: by effective date (undated last), rank, provider id, seen_at. */
export function compareActions(a: ActionInput, b: ActionInput): number {
  const da = effectiveDate(a) ?? '9999-99-99';
  const db = effectiveDate(b) ?? '9999-99-99';
  return cmpText(da, db) || rankOf(a.type) - rankOf(b.type) || cmpText(a.provider_id, b.provider_id) || cmpText(a.seen_at, b.seen_at);
}

/** The version in force of each provider id: the one learned last (ties: the greatest canonical text). */
export function latestVersions(actions: ActionInput[]): Map<string, ActionInput> {
  const latest = new Map<string, ActionInput>();
  for (const a of actions) {
    const b = latest.get(a.provider_id);
    if (b === undefined || a.seen_at > b.seen_at || (a.seen_at === b.seen_at && JSON.stringify(a) > JSON.stringify(b))) latest.set(a.provider_id, a);
  }
  return latest;
}

/** An action learned after a close it changes was stored: reports valued through that close were published without it. */
export const learnedLate = (a: ActionInput) => a.close_stored_at != null;

/** A symbol's closes as the ledger stored them: each save's instant and the latest date it held. */
export type CloseSave = { fetched_at: string; last_date: string };

/**
 * The actions with `close_stored_at` set from the saves of their symbol's closes: the earliest save
 * holding a close dated on or after the action's effective date, when it came before the action was
 * learned. Deterministic from the facts: a close stored later than `seen_at` never changes it.
 */
export function closesStoredBefore(actions: ActionInput[], savesOf: (symbol: string) => readonly CloseSave[]): ActionInput[] {
  return actions.map((a) => {
    const date = effectiveDate(a);
    const seen = Date.parse(a.seen_at);
    let first: string | null = null;
    if (date !== null) {
      for (const save of savesOf(a.symbol)) {
        if (save.last_date < date) continue;
        const at = Date.parse(save.fetched_at);
        if (at < seen && (first === null || at < Date.parse(first))) first = save.fetched_at;
      }
    }
    return { ...a, close_stored_at: first };
  });
}

/** The saves of a symbol's closes, from the closes themselves (date and fetched_at each). */
export function savesOfCloses(closes: ReadonlyArray<{ date: string; fetched_at: string }>): CloseSave[] {
  const last = new Map<string, string>();
  for (const c of closes) {
    const d = last.get(c.fetched_at);
    if (d === undefined || c.date > d) last.set(c.fetched_at, c.date);
  }
  return [...last].map(([fetched_at, last_date]) => ({ fetched_at, last_date }));
}

/** What an applicable action does to one share, or why it cannot be applied. */
export type Terms =
  | { kind: 'cash'; rate: Dec; /** an account dividend's cash as reported, in place of rate x holding */ fixed?: Dec }
  | { kind: 'shares'; num: Dec; den: Dec; /** decimal places kept: 0 for a reverse split (cash in lieu of fractions of a share) */ places: number }
  | { kind: 'none'; reason: string };

/** The terms of an action: a ratio of shares (splits, stock dividends) or cash per share. */
export function termsOf(a: ActionInput): Terms {
  switch (a.type) {
    case 'cash_dividend': {
      const fixed = parseDec(a.amount ?? null);
      if (fixed !== null && fixed.gte(0)) return { kind: 'cash', rate: new Dec(0), fixed };
      const rate = parseDec(a.rate);
      return rate !== null && rate.gte(0) ? { kind: 'cash', rate } : { kind: 'none', reason: `cash dividend without a valid rate (${JSON.stringify(a.rate)})` };
    }
    case 'stock_dividend': {
      const rate = parseDec(a.rate);
      return rate !== null && rate.gt(0) ? { kind: 'shares', num: new Dec(1).plus(rate), den: new Dec(1), places: 8 } : { kind: 'none', reason: `stock dividend without a valid rate (${JSON.stringify(a.rate)})` };
    }
    case 'forward_split':
    case 'reverse_split': {
      const num = parseDec(a.new_rate);
      const den = parseDec(a.old_rate);
      if (num === null || den === null || num.lte(0) || den.lte(0)) return { kind: 'none', reason: `${a.type} without valid rates (new ${JSON.stringify(a.new_rate)}, old ${JSON.stringify(a.old_rate)})` };
      return { kind: 'shares', num, den, places: num.lt(den) ? 0 : 8 };
    }
    default:
      return { kind: 'none', reason: `type ${a.type} is not applied by perf_v2` };
  }
}

/** The published ratio of a share action (`new:old`), or null. */
export function ratioText(a: ActionInput): string | null {
  if (a.type === 'forward_split' || a.type === 'reverse_split') return a.new_rate !== null && a.old_rate !== null ? `${a.new_rate}:${a.old_rate}` : null;
  if (a.type === 'stock_dividend' && a.rate !== null) return `${new Dec(1).plus(a.rate).toFixed()}:1`;
  return null;
}

/** A corporate action's effect on the portfolio, as the report lists it. */
export type AppliedAction = {
  date: string;
  /** `ex`: the ex-date (shares changed, dividend accrued); `payable`: the dividend paid into cash; `in_lieu`: a fraction of a share paid in cash at the close. */
  phase: 'ex' | 'payable' | 'in_lieu';
  symbol: string;
  type: string;
  provider_id: string;
  /** Share actions: `new:old` shares. */
  ratio: string | null;
  /** Cash dividends: cash per share. */
  rate: string | null;
  quantity_before: string;
  quantity_after: string;
  cash_before: string;
  cash_after: string;
  /** Cash accrued (ex), paid (payable) or paid in lieu (in_lieu); null when no cash moves. */
  amount: string | null;
  /** in_lieu: the fraction of a share and the close it was paid at. */
  fraction?: string;
  price?: string;
  /** Where the event came from: the account's own activity rows or the market's corporate actions (holding-actions.ts). */
  source: 'account' | 'market';
};

/** The source of an applied event, from its provider id (account events are `account:<record ids>`). */
export const sourceOf = (providerId: string): AppliedAction['source'] => (providerId.startsWith('account:') ? 'account' : 'market');
