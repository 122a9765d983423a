// Broker-reported values the import will not record as they came (docs/activities.md "Values
// refused", docs/executions.md). Broker data is recorded as the broker reported it, but a value the
// decision API would refuse is refused here too (the row is skipped with a caveat naming it), and
// one it would accept but that misleads where it is shown is recorded with a caveat, never silently.
// It owns those rules. Pure: the caller brings the clock and words the caveat.
import { normaliseDecimal } from '../core/decimal.ts';
import { parseRfc3339 } from '../core/time.ts';

/**
 * Control characters (C0, DEL, C1: NUL, terminal escapes) and the bidirectional controls (a text
 * that renders as another): never part of a symbol. The decision API refuses the first set in a
 * symbol (core/decision.ts), and refuses both in display names.
 */
const NOT_IN_A_SYMBOL = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A leading `=`, `+`, `-` or `@`: a spreadsheet runs the cell as a formula (CSV exports neutralise it). */
const FORMULA_START = /^[=+\-@]/;

/** How far after the sync's clock a reported date may be: a day, for the time zones of a trading date. */
export const FUTURE_SLACK_MS = 86_400_000;

export type ReportedRow = {
  symbol: string | null;
  /** An RFC 3339 date-time, or a date `YYYY-MM-DD` (read as its midnight UTC). */
  at: string;
  /** The price per share, when the row has one: never below 0. */
  price?: string | null;
};

/** Why the row is not recorded, or null when it may be. */
export function refusal(row: ReportedRow, now: Date): string | null {
  if (row.symbol !== null && NOT_IN_A_SYMBOL.test(row.symbol)) return `the symbol ${JSON.stringify(row.symbol)} holds a control character`;
  const t = parseRfc3339(/^\d{4}-\d{2}-\d{2}$/.test(row.at) ? `${row.at}T00:00:00Z` : row.at);
  if (t.ok && t.epochMs > now.getTime() + FUTURE_SLACK_MS) return `dated ${row.at}, after the sync's clock (${now.toISOString()}) by more than a day`;
  if (row.price !== undefined && row.price !== null) {
    const p = normaliseDecimal(row.price);
    if (p.ok && p.value.startsWith('-')) return `price ${row.price} is below 0`;
  }
  return null;
}

/** The caveat a recorded row carries, or null: a symbol a spreadsheet would run as a formula. */
export function symbolCaveat(symbol: string | null): string | null {
  return symbol !== null && FORMULA_START.test(symbol)
    ? `the symbol ${JSON.stringify(symbol)} starts with a character a spreadsheet runs as a formula; recorded as reported (CSV exports write it with a leading ')`
    : null;
}
