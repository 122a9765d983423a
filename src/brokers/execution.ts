// The content document of an `execution` record (canon_v1 envelope; documented in docs/executions.md).
// It is responsible for turning one BrokerFill and its link into the exact value that is hashed
// into the agent's chain. Pure: the caller assigns the id (`exe_` + ULID), recorded_at and chain
// position.

import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { CANON, contentHash } from '../core/chain.ts';
import { compareDecimal, normaliseDecimal } from '../core/decimal.ts';
import { hasLoneSurrogate } from '../core/json.ts';
import { parseRfc3339 } from '../core/time.ts';
import type { Link } from './linking.ts';
import type { BrokerFill } from './normalise.ts';

export type ExecutionContentError = { field: string; message: string };

const DECISION_ID = /^dec_[0-9A-HJKMNP-TV-Z]{26}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function decimal(field: string, text: string, min: 'positive' | 'non_negative'): { ok: true; value: string } | { ok: false; error: ExecutionContentError } {
  const n = normaliseDecimal(text);
  if (!n.ok) return { ok: false, error: { field, message: `${field} is not a decimal` } };
  const c = compareDecimal(n.value, '0');
  if (c < 0 || (min === 'positive' && c === 0)) return { ok: false, error: { field, message: `${field} must be ${min === 'positive' ? 'above' : 'at least'} 0` } };
  return { ok: true, value: n.value };
}

function filledAtError(fill: BrokerFill): string | null {
  if (fill.filledAtPrecision === 'date') {
    return DATE.test(fill.filledAt) && parseRfc3339(`${fill.filledAt}T00:00:00Z`).ok ? null : 'filled_at must be a date YYYY-MM-DD';
  }
  return parseRfc3339(fill.filledAt).ok ? null : 'filled_at must be an RFC 3339 date-time with an offset';
}

/**
 * The canon_v1 content document of one execution:
 * `{canon, type: "execution", agent, broker, account_ref, broker_order_id, broker_fill_id,
 *   client_order_id, original_order, symbol, side, quantity, price, filled_at, filled_at_precision, link}`.
 * Quantity and price are normalised decimals (canon_v1 §2); everything else is as the broker
 * reported it. Unknown values are `null`, never absent, so every execution has the same members.
 */
export function executionContent(input: { agent: string; fill: BrokerFill; link: Link | null }):
  { ok: true; document: CanonValue } | { ok: false; error: ExecutionContentError } {
  const { agent, fill, link } = input;
  if (typeof agent !== 'string' || agent === '') return { ok: false, error: { field: 'agent', message: 'agent must be a non-empty string' } };
  if (fill.side !== 'buy' && fill.side !== 'sell') return { ok: false, error: { field: 'side', message: 'side must be buy or sell' } };
  for (const [field, v] of [['account_ref', fill.accountRef], ['broker_fill_id', fill.brokerFillId], ['symbol', fill.symbol]] as const) {
    if (typeof v !== 'string' || v === '') return { ok: false, error: { field, message: `${field} must be a non-empty string` } };
  }
  const quantity = decimal('quantity', fill.quantity, 'positive');
  if (!quantity.ok) return quantity;
  const price = decimal('price', fill.price, 'non_negative');
  if (!price.ok) return price;
  const timeError = filledAtError(fill);
  if (timeError !== null) return { ok: false, error: { field: 'filled_at', message: timeError } };
  if (link !== null && ((link.method !== 'link_token' && link.method !== 'inferred') || !DECISION_ID.test(link.decision_id))) {
    return { ok: false, error: { field: 'link', message: 'link must be {method: link_token|inferred, decision_id: dec_...}' } };
  }
  const root = fill.lineage.length > 1 ? fill.lineage[fill.lineage.length - 1] : undefined;
  const document: { [key: string]: CanonValue } = {
    canon: CANON,
    type: 'execution',
    agent,
    broker: fill.broker,
    account_ref: fill.accountRef,
    broker_order_id: fill.brokerOrderId,
    broker_fill_id: fill.brokerFillId,
    client_order_id: fill.clientOrderId,
    original_order: root ? { broker_order_id: root.orderId, client_order_id: root.clientOrderId } : null,
    symbol: fill.symbol,
    side: fill.side,
    quantity: quantity.value,
    price: price.value,
    filled_at: fill.filledAt,
    filled_at_precision: fill.filledAtPrecision,
    link: link === null ? null : { method: link.method, decision_id: link.decision_id },
  };
  const bad = Object.entries(document).find(([, v]) => holdsLoneSurrogate(v));
  if (bad) return { ok: false, error: { field: bad[0], message: `${bad[0]} holds a lone surrogate (invalid Unicode)` } };
  return { ok: true, document };
}

function holdsLoneSurrogate(v: CanonValue): boolean {
  if (typeof v === 'string') return hasLoneSurrogate(v);
  if (v === null || typeof v !== 'object') return false;
  return Object.values(v).some(holdsLoneSurrogate);
}

/** canon_v1 bytes (as a string) and content_hash of an execution content document. */
export function executionHash(document: CanonValue): { canonical: string; contentHash: string } {
  return { canonical: canonicalJson(document), contentHash: contentHash(document) };
}
