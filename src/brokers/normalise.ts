// Broker shapes -> one BrokerFill.
// It decides which broker rows are fills and owns the fields a fill keeps (quantities and prices
// exactly as the broker wrote them, filled_at as it reported it), the order lineage a fill's link
// is read from (bracket legs roll up to their parent, replacements walk back through `replaces`),
// the keys a fill is recorded once by, and the cumulative-quantity check of partial fills
// (brokers.md §4).

import { normaliseDecimal } from '../core/decimal.ts';
import type { AlpacaFillActivity, AlpacaOrder } from './alpaca.ts';
import type { SnapTradeActivity } from './snaptrade.ts';

export type BrokerName = 'alpaca' | 'snaptrade';
export type FillSide = 'buy' | 'sell';

export type OrderRef = { orderId: string; clientOrderId: string | null };

export type BrokerFill = {
  broker: BrokerName;
  /** The broker's id of the account (Alpaca account id, SnapTrade account id), never its number. */
  accountRef: string;
  brokerOrderId: string | null;
  /** The broker's id of this fill (Alpaca activity id, SnapTrade activity id). */
  brokerFillId: string;
  /** The filled order's own client order id; SnapTrade never reports one. */
  clientOrderId: string | null;
  symbol: string;
  side: FillSide;
  /** Decimal text as the broker wrote it (SnapTrade: the absolute value of `units`). */
  quantity: string;
  price: string;
  /** As reported; for a date-only report, the date `YYYY-MM-DD` and precision `date`. */
  filledAt: string;
  filledAtPrecision: 'instant' | 'date';
  /** Alpaca: the order's filled quantity after this fill. */
  cumulativeQuantity: string | null;
  /**
   * The filled order, then (for a bracket leg) its parent, then each order it replaced back to the
   * original. The link token is read from this, original first.
   */
  lineage: OrderRef[];
};

export type NormaliseProblem = { brokerFillId: string; message: string };

// ---------------------------------------------------------------------------------------------
// Exact decimal sums (quantities are small decimals; never through a float)

function toScaled(text: string): { units: bigint; scale: number } | null {
  const n = normaliseDecimal(text);
  if (!n.ok) return null;
  const [int, frac = ''] = n.value.replace('-', '').split('.');
  const units = BigInt((int as string) + frac) * (n.value.startsWith('-') ? -1n : 1n);
  return { units, scale: frac.length };
}

function fromScaled(units: bigint, scale: number): string {
  const neg = units < 0n;
  const digits = (neg ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  const n = normaliseDecimal((neg ? '-' : '') + text);
  return n.ok ? n.value : text;
}

/** a + b, exactly, as a normalised decimal; null when either is not a decimal. */
export function addDecimal(a: string, b: string): string | null {
  const x = toScaled(a);
  const y = toScaled(b);
  if (!x || !y) return null;
  const scale = Math.max(x.scale, y.scale);
  return fromScaled(x.units * 10n ** BigInt(scale - x.scale) + y.units * 10n ** BigInt(scale - y.scale), scale);
}

/** True when a and b are the same decimal value (`"4"` and `"4.00"` are). */
export function sameDecimal(a: string, b: string): boolean {
  const x = normaliseDecimal(a);
  const y = normaliseDecimal(b);
  return x.ok && y.ok && x.value === y.value;
}

// ---------------------------------------------------------------------------------------------
// Alpaca

export type OrderIndex = Map<string, { order: AlpacaOrder; parentId: string | null }>;

/** Indexes orders and their bracket/OCO/OTO legs (read with `nested=true`) by id. */
export function indexOrders(orders: Iterable<AlpacaOrder>, into: OrderIndex = new Map()): OrderIndex {
  for (const order of orders) {
    into.set(order.id, { order, parentId: into.get(order.id)?.parentId ?? null });
    for (const leg of order.legs ?? []) {
      indexOrders([leg], into);
      (into.get(leg.id) as { parentId: string | null }).parentId = order.id;
    }
  }
  return into;
}

/** Order ids that fills (or replacement chains) name but the index lacks: fetch them by id. */
export function missingOrderIds(fills: AlpacaFillActivity[], index: OrderIndex): string[] {
  const missing = new Set<string>();
  for (const f of fills) {
    if (f.order_id === null) continue;
    const lineage = alpacaLineage(f.order_id, index);
    // The lineage stops at the first id the index lacks, so only its last entry can be missing.
    const oldest = lineage[lineage.length - 1] as OrderRef;
    if (!index.has(oldest.orderId)) missing.add(oldest.orderId);
  }
  return [...missing];
}

/** The order, its parent if it is a leg, then each order it replaced; stops at an unknown id. */
export function alpacaLineage(orderId: string, index: OrderIndex): OrderRef[] {
  const out: OrderRef[] = [];
  const visited = new Set<string>();
  let id: string | null = orderId;
  while (id !== null && !visited.has(id)) {
    visited.add(id);
    const entry = index.get(id);
    out.push({ orderId: id, clientOrderId: entry?.order.client_order_id ?? null });
    if (!entry) break;
    id = entry.parentId ?? entry.order.replaces;
  }
  return out;
}

const ALPACA_SIDES: Record<string, FillSide> = { buy: 'buy', sell: 'sell', sell_short: 'sell' };

/** Alpaca FILL activities -> fills, ordered by time and, within one order, by cumulative quantity. */
export function alpacaFills(input: {
  accountRef: string;
  activities: AlpacaFillActivity[];
  orders: OrderIndex;
}): { fills: BrokerFill[]; problems: NormaliseProblem[] } {
  const fills: BrokerFill[] = [];
  const problems: NormaliseProblem[] = [];
  for (const a of input.activities) {
    const side = ALPACA_SIDES[a.side];
    if (!side) {
      problems.push({ brokerFillId: a.id, message: `unknown side ${JSON.stringify(a.side)}` });
      continue;
    }
    if (!normaliseDecimal(a.qty).ok || !normaliseDecimal(a.price).ok) {
      problems.push({ brokerFillId: a.id, message: 'qty or price is not a decimal' });
      continue;
    }
    const lineage = a.order_id === null ? [] : alpacaLineage(a.order_id, input.orders);
    fills.push({
      broker: 'alpaca',
      accountRef: input.accountRef,
      brokerOrderId: a.order_id,
      brokerFillId: a.id,
      clientOrderId: lineage[0]?.clientOrderId ?? null,
      symbol: a.symbol,
      side,
      quantity: a.qty,
      price: a.price,
      filledAt: a.transaction_time,
      filledAtPrecision: 'instant',
      cumulativeQuantity: a.cum_qty,
      lineage,
    });
  }
  fills.sort(compareFills);
  return { fills, problems };
}

function compareFills(x: BrokerFill, y: BrokerFill): number {
  const tx = Date.parse(x.filledAt);
  const ty = Date.parse(y.filledAt);
  if (x.brokerOrderId !== null && x.brokerOrderId === y.brokerOrderId && x.cumulativeQuantity && y.cumulativeQuantity) {
    // Partial fills of one order in the same millisecond are not totally ordered (Alpaca-API #170).
    const c = addDecimal(x.cumulativeQuantity, '-' + y.cumulativeQuantity.replace(/^-/, ''));
    if (c !== null && c !== '0') return c.startsWith('-') ? -1 : 1;
  }
  if (tx !== ty) return tx - ty;
  return x.brokerFillId < y.brokerFillId ? -1 : x.brokerFillId > y.brokerFillId ? 1 : 0;
}

export type CumulativeProblem = { orderId: string; brokerFillId: string | null; message: string };

/**
 * Partial fills of each order, in cumulative order, must add up: each fill's cumulative quantity
 * is the previous one plus its own quantity, starting from `prior` (what earlier syncs recorded).
 * With the order at hand, the last cumulative quantity must not exceed `filled_qty`, and must equal
 * it when the order is in a terminal state.
 */
export function checkCumulative(
  fills: BrokerFill[],
  options: { prior?: ReadonlyMap<string, string>; orders?: OrderIndex } = {},
): CumulativeProblem[] {
  const problems: CumulativeProblem[] = [];
  const byOrder = new Map<string, BrokerFill[]>();
  for (const f of fills) {
    if (f.brokerOrderId === null || f.cumulativeQuantity === null) continue;
    const list = byOrder.get(f.brokerOrderId) ?? [];
    list.push(f);
    byOrder.set(f.brokerOrderId, list);
  }
  for (const [orderId, list] of byOrder) {
    list.sort(compareFills);
    let running = options.prior?.get(orderId) ?? '0';
    for (const f of list) {
      const next = addDecimal(running, f.quantity);
      if (next === null || !sameDecimal(next, f.cumulativeQuantity as string)) {
        problems.push({ orderId, brokerFillId: f.brokerFillId, message: `cumulative quantity ${f.cumulativeQuantity} but ${running} + ${f.quantity} = ${next}` });
      }
      running = f.cumulativeQuantity as string;
    }
    const order = options.orders?.get(orderId)?.order;
    if (order) {
      const excess = addDecimal(running, '-' + order.filled_qty);
      if (excess !== null && excess !== '0' && !excess.startsWith('-')) {
        problems.push({ orderId, brokerFillId: null, message: `fills add up to ${running}, more than the order's filled_qty ${order.filled_qty}` });
      } else if (TERMINAL.has(order.status) && excess !== '0') {
        problems.push({ orderId, brokerFillId: null, message: `order is ${order.status} with filled_qty ${order.filled_qty}, fills add up to ${running}` });
      }
    }
  }
  return problems;
}

const TERMINAL = new Set(['filled', 'canceled', 'expired', 'replaced', 'rejected']);

// ---------------------------------------------------------------------------------------------
// SnapTrade

const SNAPTRADE_SIDES: Record<string, FillSide> = { BUY: 'buy', SELL: 'sell' };

const DATE_ONLY = /^(\d{4}-\d{2}-\d{2})(?:[Tt ]00:00(?::00(?:\.0+)?)?(?:[Zz]|\+00:?00)?)?$/;

/**
 * SnapTrade activities -> fills. Only BUY and SELL are fills (brokers.md §7.4); every other type
 * is counted in `skipped`. A trade_date at midnight UTC is what date-only brokers report, so it is
 * kept as a date. `brokerOrderId` is SnapTrade's `external_reference_id` (it groups the rows of one
 * broker event; whether it equals the broker's order id is not documented).
 */
export function snapTradeFills(input: {
  accountRef: string;
  activities: SnapTradeActivity[];
}): { fills: BrokerFill[]; skipped: Record<string, number>; problems: NormaliseProblem[] } {
  const fills: BrokerFill[] = [];
  const skipped: Record<string, number> = {};
  const problems: NormaliseProblem[] = [];
  for (const a of input.activities) {
    const side = SNAPTRADE_SIDES[a.type];
    if (!side) {
      skipped[a.type] = (skipped[a.type] ?? 0) + 1;
      continue;
    }
    const symbol = snapTradeSymbol(a);
    if (symbol === null) {
      problems.push({ brokerFillId: a.id, message: 'fill without a symbol' });
      continue;
    }
    if (a.units === null || a.price === null || !normaliseDecimal(a.units).ok || !normaliseDecimal(a.price).ok) {
      problems.push({ brokerFillId: a.id, message: 'units or price missing or not a decimal' });
      continue;
    }
    if (a.trade_date === null) {
      problems.push({ brokerFillId: a.id, message: 'fill without a trade_date' });
      continue;
    }
    const dateOnly = DATE_ONLY.exec(a.trade_date);
    fills.push({
      broker: 'snaptrade',
      accountRef: input.accountRef,
      brokerOrderId: a.external_reference_id,
      brokerFillId: a.id,
      clientOrderId: null,
      symbol,
      side,
      quantity: a.units.replace(/^-/, ''),
      price: a.price,
      filledAt: dateOnly ? (dateOnly[1] as string) : a.trade_date,
      filledAtPrecision: dateOnly ? 'date' : 'instant',
      cumulativeQuantity: null,
      lineage: a.external_reference_id === null ? [] : [{ orderId: a.external_reference_id, clientOrderId: null }],
    });
  }
  return { fills, skipped, problems };
}

function snapTradeSymbol(a: SnapTradeActivity): string | null {
  const option = a.option_symbol as { ticker?: unknown } | null;
  if (option && typeof option.ticker === 'string') return option.ticker;
  const s = a.symbol?.symbol ?? a.symbol?.raw_symbol;
  return typeof s === 'string' && s !== '' ? s : null;
}

// ---------------------------------------------------------------------------------------------
// Recording each fill once

/**
 * Keys a fill is recorded once by; a store holding any of them already has this fill. Alpaca: the
 * activity id. SnapTrade: the activity id, and (because ids can change when SnapTrade re-ingests)
 * a fingerprint of account, date, side, symbol, quantity and price with its occurrence number
 * among identical fills of the batch (the n-th identical fill of a day is a different fill).
 * Fingerprints need the batch to hold whole days: read activities by whole dates.
 */
export function fillKeys(fills: BrokerFill[]): string[][] {
  const occurrences = new Map<string, number>();
  return fills.map((f) => {
    const idKey = `${f.broker}:${f.accountRef}:id:${f.brokerFillId}`;
    if (f.broker !== 'snaptrade') return [idKey];
    const q = normaliseDecimal(f.quantity);
    const p = normaliseDecimal(f.price);
    const base = [f.accountRef, f.filledAt, f.side, f.symbol, q.ok ? q.value : f.quantity, p.ok ? p.value : f.price].join('|');
    const n = (occurrences.get(base) ?? 0) + 1;
    occurrences.set(base, n);
    return [idKey, `snaptrade:fp:${base}|${n}`];
  });
}

/** The fills with each key seen once; later duplicates (re-read page overlaps) are dropped. */
export function dedupeFills(fills: BrokerFill[], alreadyRecorded: (key: string) => boolean = () => false): BrokerFill[] {
  const keys = fillKeys(fills);
  const seen = new Set<string>();
  const out: BrokerFill[] = [];
  fills.forEach((f, i) => {
    const ks = keys[i] as string[];
    if (ks.some((k) => seen.has(k) || alreadyRecorded(k))) return;
    for (const k of ks) seen.add(k);
    out.push(f);
  });
  return out;
}
