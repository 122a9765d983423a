// What the service knew of each symbol's corporate actions when it computed a report: the dates
// the market-data provider was asked about (the facts job asks from a symbol's first date to the
// day of the request). A report's labels follow it (docs/perf_v1.md §4.2): "total return" only
// when the benchmark's actions were known for the whole period, "splits and dividends applied"
// only for the holdings whose actions were known while held; otherwise a caveat names the days
// missing. Pure: the service records the ranges, the report keeps the ones it was given.

import { dayNumber, plusDays } from './calendar.ts';

/** Days whose corporate actions (by ex-date) the provider was asked about, inclusive. */
export type KnownRange = { from: string; through: string };
/** By symbol; a symbol absent was never asked about. */
export type ActionsKnown = Record<string, KnownRange>;
/** What the report needed and did not have: a symbol never asked about, or asked about for part of a period. */
export type Missing = { symbol: string; known: KnownRange | null; from: string; through: string };

/** Crypto pairs (BASE/QUOTE) have no corporate actions: nothing about them is ever missing. */
const hasCorporateActions = (symbol: string) => !symbol.includes('/');

/** The union of two ranges asked about; the newer alone when they neither overlap nor touch. */
export function widen(known: KnownRange | null, asked: KnownRange): KnownRange {
  if (known === null) return asked;
  const touches = dayNumber(asked.from) <= dayNumber(known.through) + 1 && dayNumber(known.from) <= dayNumber(asked.through) + 1;
  if (!touches) return asked;
  return { from: known.from < asked.from ? known.from : asked.from, through: known.through > asked.through ? known.through : asked.through };
}

/** The part of `from`..`through` whose actions of `symbol` were not known, or null when none is missing. */
export function missingPart(known: ActionsKnown, symbol: string, from: string, through: string): Missing | null {
  if (!hasCorporateActions(symbol) || from > through) return null;
  const range = known[symbol] ?? null;
  if (range !== null && range.from <= from && range.through >= through) return null;
  return { symbol, known: range, from, through };
}

/** "SPY: none known for 2026-01-02 to 2026-03-20 (never fetched …)", or "SPY: unknown for 2026-03-02 to 2026-03-20". */
export function describeMissing(m: Missing): string {
  const period = `${m.from} to ${m.through}`;
  if (m.known === null) return `${m.symbol}: none known for ${period} (never fetched from the provider)`;
  if (m.known.through < m.from || m.known.from > m.through) return `${m.symbol}: none known for ${period} (known for ${m.known.from} to ${m.known.through} only)`;
  const gaps: string[] = [];
  if (m.known.from > m.from) gaps.push(`${m.from} to ${plusDays(m.known.from, -1)}`);
  if (m.known.through < m.through) gaps.push(`${plusDays(m.known.through, 1)} to ${m.through}`);
  return `${m.symbol}: unknown for ${gaps.join(' and ')}`;
}
