// Corporate actions from Alpaca Market Data (`GET /v1/corporate-actions`), read as facts.
// It decides how one page of the response becomes CorporateAction values, and which of them belong
// to a date range. The page is read losslessly (core/json.ts): a rate such as 0.61 is the decimal
// text of the JSON number as written, never a double. The inner object is keyed by plural type name
// (`forward_splits`, `cash_dividends`, ...), a missing key is an empty list, and every type is
// kept, known here or not. Range: Alpaca dates a cash dividend by its process_date (= payable date,
// weeks after the ex-date), so the request's window is widened forward (ACTIONS_WINDOW_DAYS) and
// the actions are kept by their ex_date (a merger's effective_date; process_date when neither).
import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { normaliseDecimal } from '../core/decimal.ts';
import { sha256Hex } from '../core/sha256.ts';
import { isIsoDate, type CorporateAction, type MarketResult } from './port.ts';

/** How far past the range's end actions are asked for: a dividend is processed on its payable date. */
export const ACTIONS_WINDOW_DAYS = 90;

type Obj = { [key: string]: CanonValue };

/** The members naming the affected symbol, first found wins, for types without `symbol`. */
const SYMBOL_MEMBERS = ['symbol', 'old_symbol', 'source_symbol', 'acquiree_symbol'];

/** `forward_splits` -> `forward_split`; a key not in the plural form is kept as it is. */
export function singularType(key: string): string {
  return key.endsWith('s') ? key.slice(0, -1) : key;
}

/** The date an action counts on: ex_date, else process_date. */
export function actionDate(a: CorporateAction): string | null {
  return a.ex_date ?? a.process_date;
}

/** Actions dated from..to inclusive, by date then provider_id (one per provider_id: the last one read). */
export function inRange(actions: CorporateAction[], from: string, to: string): CorporateAction[] {
  const byId = new Map<string, CorporateAction>();
  for (const a of actions) {
    const date = actionDate(a);
    if (date !== null && date >= from && date <= to) byId.set(a.provider_id, a);
  }
  return [...byId.values()].sort((a, b) => cmp(actionDate(a)!, actionDate(b)!) || cmp(a.provider_id, b.provider_id));
}

/** One page: `{"corporate_actions": {...}, "next_page_token": ...}`, numbers already decimal text. */
export function parseActionsPage(body: Obj): MarketResult<{ actions: CorporateAction[]; next: string | null }> {
  const next = body.next_page_token;
  if (next !== null && next !== undefined && typeof next !== 'string') return providerError('corporate actions: next_page_token is not a string');
  const groups = body.corporate_actions;
  if (!isObj(groups)) return providerError('corporate actions: no `corporate_actions` object');
  const actions: CorporateAction[] = [];
  for (const key of Object.keys(groups).sort()) {
    const list = groups[key];
    if (list === null) continue;
    if (!Array.isArray(list)) return providerError(`corporate actions: ${key} is not an array`);
    for (const item of list) {
      const action = actionOf(singularType(key), item);
      if (!action.ok) return action;
      actions.push(action.value);
    }
  }
  return { ok: true, value: { actions, next: typeof next === 'string' && next !== '' ? next : null } };
}

/** One Alpaca object of type `type` as a CorporateAction. */
export function actionOf(type: string, item: CanonValue): MarketResult<CorporateAction> {
  if (!isObj(item)) return providerError(`corporate actions: a ${type} is not an object`);
  const raw = canonicalJson(item);
  const id = typeof item.id === 'string' && item.id !== '' ? item.id : `content:${sha256Hex(`${type}\n${raw}`).slice(0, 32)}`;
  const where = `corporate actions: ${type} ${id}`;
  const dates: Record<string, string | null> = {};
  for (const member of ['ex_date', 'effective_date', 'payable_date', 'process_date', 'record_date']) {
    const value = item[member];
    if (value === undefined || value === null) dates[member] = null;
    else if (typeof value === 'string' && isIsoDate(value)) dates[member] = value;
    else return providerError(`${where}: ${member} is not a date: ${JSON.stringify(value)}`);
  }
  const rates: Record<string, string | null> = {};
  for (const member of ['old_rate', 'new_rate', 'rate']) {
    const value = item[member];
    const decimal = typeof value === 'string' ? normaliseDecimal(value) : null;
    if (value === undefined || value === null) rates[member] = null;
    else if (decimal?.ok) rates[member] = decimal.value;
    else return providerError(`${where}: ${member} is not a number: ${JSON.stringify(value)}`);
  }
  return {
    ok: true,
    value: {
      provider_id: id,
      source: 'alpaca',
      type,
      symbol: symbolOf(item),
      ex_date: dates.ex_date ?? dates.effective_date ?? null,
      payable_date: dates.payable_date ?? null,
      process_date: dates.process_date ?? null,
      record_date: dates.record_date ?? null,
      old_rate: rates.old_rate ?? null,
      new_rate: rates.new_rate ?? null,
      rate: rates.rate ?? null,
      special: flag(item.special),
      raw,
    },
  };
}

function symbolOf(item: Obj): string {
  for (const member of SYMBOL_MEMBERS) if (typeof item[member] === 'string' && item[member] !== '') return item[member] as string;
  const other = Object.keys(item).sort().find((k) => k.endsWith('_symbol') && typeof item[k] === 'string');
  return other === undefined ? '' : (item[other] as string);
}

/** A boolean flag, or the strings "true" / "false" (some Alpaca schemas write flags so). */
function flag(value: CanonValue | undefined): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return null;
}

function isObj(v: CanonValue | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function providerError(message: string): MarketResult<never> {
  return { ok: false, error: { code: 'provider_error', message } };
}
