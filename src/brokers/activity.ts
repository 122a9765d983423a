// Broker account activities that are not trades (dividends, splits, deposits and withdrawals, fees,
// interest, taxes, ...) -> one BrokerActivity -> the content document of an `activity` record
// (canon_v1 envelope; docs/canon_v1.md §3.2 and docs/activities.md).
// It decides which broker rows are activities and owns the fields an activity keeps (as the broker
// reported them; decimals normalised), the keys each is recorded once by, and the exact hashed
// document. Pure: the caller assigns the id (`act_` + ULID), recorded_at and chain position.

import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { CANON, contentHash } from '../core/chain.ts';
import { normaliseDecimal } from '../core/decimal.ts';
import { hasLoneSurrogate } from '../core/json.ts';
import { parseRfc3339 } from '../core/time.ts';
import type { AlpacaNonTradeActivity } from './alpaca.ts';
import type { BrokerName } from './normalise.ts';
import type { SnapTradeActivity } from './snaptrade.ts';

export type BrokerActivity = {
  broker: BrokerName;
  /** The broker's id of the account, never its number. */
  accountRef: string;
  /** Alpaca's activity id (`<17 digits>::<uuid>`), SnapTrade's activity id. */
  brokerActivityId: string;
  /** The broker's own code, as reported (Alpaca `activity_type`, SnapTrade `type`). */
  activityType: string;
  /** Alpaca `activity_sub_type` (`CDIV`, `FSPLIT`, `REG`, ...); SnapTrade reports none. */
  activitySubType: string | null;
  /** Alpaca `status` (`executed`, `correct`, `canceled`); SnapTrade reports none. */
  status: string | null;
  symbol: string | null;
  /** Decimal texts as the broker wrote them (signed where the broker signs them). */
  quantity: string | null;
  price: string | null;
  perShareAmount: string | null;
  /** The cash the activity moved, signed: positive into the account (Alpaca `net_amount`, SnapTrade `amount`). */
  amount: string | null;
  currency: string | null;
  /** As reported; for a date-only report (or midnight UTC), the date `YYYY-MM-DD` and precision `date`. */
  occurredAt: string;
  occurredAtPrecision: 'instant' | 'date';
};

export type ActivityProblem = { brokerActivityId: string; message: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date alone, or a date at midnight UTC (SnapTrade's way of writing a date-only trade_date). */
const DATE_ONLY = /^(\d{4}-\d{2}-\d{2})(?:[Tt ]00:00(?::00(?:\.0+)?)?(?:[Zz]|\+00:?00)?)?$/;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function when(text: string): { occurredAt: string; occurredAtPrecision: 'instant' | 'date' } {
  const dateOnly = DATE_ONLY.exec(text);
  return dateOnly ? { occurredAt: dateOnly[1] as string, occurredAtPrecision: 'date' } : { occurredAt: text, occurredAtPrecision: 'instant' };
}

/**
 * Alpaca non-trade activities (every `activity_type` but FILL) of one account. A row without a
 * date takes its `created_at`; one with neither, or without an id, is a problem, not an activity.
 */
export function alpacaActivities(input: { accountRef: string; currency: string; rows: AlpacaNonTradeActivity[] }):
  { activities: BrokerActivity[]; problems: ActivityProblem[] } {
  const activities: BrokerActivity[] = [];
  const problems: ActivityProblem[] = [];
  for (const a of input.rows) {
    if (a.activity_type === 'FILL') continue;
    const date = str(a.date) ?? str(a.created_at);
    if (date === null) {
      problems.push({ brokerActivityId: a.id, message: 'activity without a date' });
      continue;
    }
    activities.push({
      broker: 'alpaca', accountRef: input.accountRef, brokerActivityId: a.id, activityType: a.activity_type,
      activitySubType: str(a.activity_sub_type), status: str(a.status), symbol: str(a.symbol), quantity: str(a.qty), price: str(a.price),
      perShareAmount: str(a.per_share_amount), amount: str(a.net_amount), currency: input.currency, ...when(date),
    });
  }
  return { activities, problems };
}

/** Every SnapTrade activity type but BUY and SELL (those are fills, normalise.ts). */
export function snapTradeActivities(input: { accountRef: string; rows: SnapTradeActivity[] }):
  { activities: BrokerActivity[]; problems: ActivityProblem[] } {
  const activities: BrokerActivity[] = [];
  const problems: ActivityProblem[] = [];
  for (const a of input.rows) {
    if (a.type === 'BUY' || a.type === 'SELL') continue;
    if (a.trade_date === null) {
      problems.push({ brokerActivityId: a.id, message: 'activity without a trade_date' });
      continue;
    }
    const symbol = a.symbol?.symbol ?? a.symbol?.raw_symbol;
    const currency = (a.currency as { code?: unknown } | null | undefined)?.code;
    activities.push({
      broker: 'snaptrade', accountRef: input.accountRef, brokerActivityId: a.id, activityType: a.type, activitySubType: null, status: null,
      symbol: str(symbol), quantity: a.units, price: a.price, perShareAmount: null, amount: a.amount, currency: str(currency), ...when(a.trade_date),
    });
  }
  return { activities, problems };
}

// ---------------------------------------------------------------------------------------------
// Recording each activity once

const decimalKey = (v: string | null): string => {
  if (v === null) return '';
  const n = normaliseDecimal(v);
  return n.ok ? n.value : v;
};

/**
 * Keys an activity is recorded once by; a store holding any of them already has it.
 * Alpaca: the activity id with its status, so the same activity re-read later as `canceled` or
 * `correct` is a new fact (recorded once too) while a re-read of the same row is not. SnapTrade:
 * the activity id, and (ids can change when SnapTrade re-ingests) a fingerprint of account, date,
 * type, symbol, units, price and amount with its occurrence number among identical rows of the
 * batch. Fingerprints need the batch to hold whole days: read activities by whole dates.
 */
export function activityKeys(activities: BrokerActivity[]): string[][] {
  const occurrences = new Map<string, number>();
  return activities.map((a) => {
    if (a.broker !== 'snaptrade') return [`alpaca:${a.accountRef}:activity:${a.brokerActivityId}:${a.status ?? ''}`];
    const base = [a.accountRef, a.occurredAt, a.activityType, a.symbol ?? '', decimalKey(a.quantity), decimalKey(a.price), decimalKey(a.amount)].join('|');
    const n = (occurrences.get(base) ?? 0) + 1;
    occurrences.set(base, n);
    return [`snaptrade:${a.accountRef}:activity:id:${a.brokerActivityId}`, `snaptrade:afp:${base}|${n}`];
  });
}

/** The activities with each key seen once; later duplicates (re-read overlaps) are dropped. */
export function dedupeActivities(activities: BrokerActivity[], alreadyRecorded: (key: string) => boolean = () => false):
  { activity: BrokerActivity; keys: string[] }[] {
  const keys = activityKeys(activities);
  const seen = new Set<string>();
  const out: { activity: BrokerActivity; keys: string[] }[] = [];
  activities.forEach((a, i) => {
    const ks = keys[i] as string[];
    if (ks.some((k) => seen.has(k) || alreadyRecorded(k))) return;
    for (const k of ks) seen.add(k);
    out.push({ activity: a, keys: ks });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The content document

export type ActivityContentError = { field: string; message: string };

function optionalDecimal(field: string, text: string | null): { ok: true; value: string | null } | { ok: false; error: ActivityContentError } {
  if (text === null) return { ok: true, value: null };
  const n = normaliseDecimal(text);
  return n.ok ? { ok: true, value: n.value } : { ok: false, error: { field, message: `${field} is not a decimal` } };
}

function occurredAtError(a: BrokerActivity): string | null {
  if (a.occurredAtPrecision === 'date') {
    return DATE.test(a.occurredAt) && parseRfc3339(`${a.occurredAt}T00:00:00Z`).ok ? null : 'occurred_at must be a date YYYY-MM-DD';
  }
  return parseRfc3339(a.occurredAt).ok ? null : 'occurred_at must be an RFC 3339 date-time with an offset';
}

/**
 * The canon_v1 content document of one activity:
 * `{canon, type: "activity", agent, broker, account_ref, broker_activity_id, activity_type,
 *   activity_sub_type, status, symbol, quantity, price, per_share_amount, amount, currency,
 *   occurred_at, occurred_at_precision}`. Every member is present (`null` where the broker gave no
 * value); decimals are normalised (canon_v1 §2) and keep their sign.
 */
export function activityContent(input: { agent: string; activity: BrokerActivity }):
  { ok: true; document: CanonValue } | { ok: false; error: ActivityContentError } {
  const { agent, activity: a } = input;
  if (typeof agent !== 'string' || agent === '') return { ok: false, error: { field: 'agent', message: 'agent must be a non-empty string' } };
  for (const [field, v] of [['account_ref', a.accountRef], ['broker_activity_id', a.brokerActivityId], ['activity_type', a.activityType]] as const) {
    if (typeof v !== 'string' || v === '') return { ok: false, error: { field, message: `${field} must be a non-empty string` } };
  }
  const decimals: Record<string, string | null> = {};
  for (const [field, text] of [['quantity', a.quantity], ['price', a.price], ['per_share_amount', a.perShareAmount], ['amount', a.amount]] as const) {
    const d = optionalDecimal(field, text);
    if (!d.ok) return d;
    decimals[field] = d.value;
  }
  const timeError = occurredAtError(a);
  if (timeError !== null) return { ok: false, error: { field: 'occurred_at', message: timeError } };
  const document: { [key: string]: CanonValue } = {
    canon: CANON,
    type: 'activity',
    agent,
    broker: a.broker,
    account_ref: a.accountRef,
    broker_activity_id: a.brokerActivityId,
    activity_type: a.activityType,
    activity_sub_type: a.activitySubType,
    status: a.status,
    symbol: a.symbol,
    quantity: decimals.quantity ?? null,
    price: decimals.price ?? null,
    per_share_amount: decimals.per_share_amount ?? null,
    amount: decimals.amount ?? null,
    currency: a.currency,
    occurred_at: a.occurredAt,
    occurred_at_precision: a.occurredAtPrecision,
  };
  const bad = Object.entries(document).find(([, v]) => typeof v === 'string' && hasLoneSurrogate(v));
  if (bad) return { ok: false, error: { field: bad[0], message: `${bad[0]} holds a lone surrogate (invalid Unicode)` } };
  return { ok: true, document };
}

/** canon_v1 bytes (as a string) and content_hash of an activity content document. */
export function activityHash(document: CanonValue): { canonical: string; contentHash: string } {
  return { canonical: canonicalJson(document), contentHash: contentHash(document) };
}
