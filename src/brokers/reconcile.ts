// Positions reported by the broker against the positions the imported fills imply.
// It owns the implied position per symbol (exact decimals) and the comparison whose mismatches are
// shown as caveats (history older than the import, a transfer in, a split): never smoothed over.

import { normaliseDecimal } from '../core/decimal.ts';
import type { AlpacaPosition } from './alpaca.ts';
import { addDecimal, sameDecimal, type BrokerFill } from './normalise.ts';
import type { SnapTradePositions } from './snaptrade.ts';

/** A position as the broker reported it: quantity signed (negative is short), as decimal text. */
export type ReportedPosition = { symbol: string; quantity: string };

export type PositionCheck = {
  symbol: string;
  /** what the imported fills add up to */
  implied: string;
  /** what the broker reports ("0" when it lists no position) */
  reported: string;
  matches: boolean;
};

/** Positions are matched on the symbol without separators or case (`BTC/USD` and `BTCUSD` are one). */
const symbolKey = (s: string): string => s.toUpperCase().replace(/[/\-\s]/g, '');

/** Net quantity per symbol: buys add, sells subtract. Fills with an unreadable quantity are skipped. */
export function impliedPositions(fills: Iterable<Pick<BrokerFill, 'symbol' | 'side' | 'quantity'>>): Map<string, { symbol: string; quantity: string }> {
  const out = new Map<string, { symbol: string; quantity: string }>();
  for (const f of fills) {
    const key = symbolKey(f.symbol);
    const current = out.get(key) ?? { symbol: f.symbol, quantity: '0' };
    const q = normaliseDecimal(f.quantity);
    if (!q.ok) continue;
    const next = addDecimal(current.quantity, f.side === 'buy' ? q.value : q.value === '0' ? '0' : `-${q.value}`);
    if (next !== null) out.set(key, { symbol: current.symbol, quantity: next });
  }
  return out;
}

/** Every symbol held by either side, with whether the two agree. */
export function reconcilePositions(
  implied: Map<string, { symbol: string; quantity: string }>,
  reported: readonly ReportedPosition[],
): PositionCheck[] {
  const byKey = new Map<string, PositionCheck>();
  for (const [key, p] of implied) byKey.set(key, { symbol: p.symbol, implied: p.quantity, reported: '0', matches: false });
  for (const r of reported) {
    const key = symbolKey(r.symbol);
    const n = normaliseDecimal(r.quantity);
    const quantity = n.ok ? n.value : r.quantity;
    const entry = byKey.get(key) ?? { symbol: r.symbol, implied: '0', reported: '0', matches: false };
    const sum = addDecimal(entry.reported, quantity);
    byKey.set(key, { ...entry, symbol: r.symbol, reported: sum ?? quantity });
  }
  const out = [...byKey.values()].map((c) => ({ ...c, matches: sameDecimal(c.implied, c.reported) }));
  return out.filter((c) => !(c.matches && c.implied === '0')).sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}

export function alpacaReportedPositions(positions: readonly AlpacaPosition[]): ReportedPosition[] {
  return positions.map((p) => ({ symbol: p.symbol, quantity: p.qty }));
}

export function snapTradeReportedPositions(positions: SnapTradePositions): ReportedPosition[] {
  const out: ReportedPosition[] = [];
  for (const r of positions.results) {
    const instrument = r.instrument as { symbol?: unknown } | undefined;
    if (typeof instrument?.symbol === 'string' && typeof r.units === 'string') out.push({ symbol: instrument.symbol, quantity: r.units });
  }
  return out;
}
