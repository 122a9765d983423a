// The records of an agent's chain as inputs of the performance method (docs/perf_v1.md rule 6): a
// decision's terms and the price observed at its receipt as an accounting input, and an imported
// execution's content document as a fill. It owns the reading of those content documents.

import type { ChainInput, DecisionTerms, ObservedPrice } from './values.ts';
import type { Action, DecisionInput, FillInput } from './portfolio.ts';

const ACTIONS = new Set<string>(['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE']);
type Content = { [key: string]: unknown };

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** What the accounting reads of an observation: the price, or why there is none. */
export type PriceAtReceipt = Pick<ObservedPrice & { status: 'priced' }, 'status' | 'price'> | Pick<ObservedPrice & { status: 'unpriced' }, 'status' | 'reason'>;

/** The terms of a decision's content document (as the priced_decisions projection reads them in SQL). */
export function termsOf(record: ChainInput): DecisionTerms {
  const c = JSON.parse(record.content) as Content;
  return {
    symbol: text(c.symbol) ?? record.symbol ?? '',
    action: text(c.action),
    targetAllocationPct: text(c.target_allocation_pct),
    quantity: text(c.quantity),
    notional: text(c.notional),
    timeHorizon: text(c.time_horizon),
  };
}

/** A decision's terms and observation as an accounting input (an unknown action holds). */
export function decisionOf(id: string, recordedAt: string, terms: DecisionTerms, observation: PriceAtReceipt): DecisionInput {
  return {
    id,
    recorded_at: recordedAt,
    symbol: terms.symbol,
    action: (terms.action !== null && ACTIONS.has(terms.action) ? terms.action : 'HOLD') as Action,
    target_allocation_pct: terms.targetAllocationPct,
    quantity: terms.quantity,
    notional: terms.notional,
    time_horizon: terms.timeHorizon,
    price: observation.status === 'priced' ? observation.price : null,
    price_missing_reason: observation.status === 'priced' ? null : observation.reason,
  };
}

/** RFC 3339 instants as fixed-width UTC text (9 fractional digits), so that text order is time order. */
export function instantKey(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(value);
  if (m) return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z`;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) return value;
  return instantKey(new Date(ms).toISOString());
}

/** An execution's content document as a fill (a date-only fill counts from 00:00 UTC of its day). */
export function fillInput(record: ChainInput): FillInput {
  const c = JSON.parse(record.content) as Content;
  return {
    id: record.id,
    executed_at: instantKey(text(c.filled_at) ?? record.recordedAt),
    symbol: text(c.symbol) ?? record.symbol ?? '',
    side: c.side === 'sell' ? 'sell' : 'buy',
    quantity: text(c.quantity) ?? '0',
    price: text(c.price) ?? '0',
    fee: null,
  };
}
