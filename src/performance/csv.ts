// The one CSV writer of the service: every text/csv answer (the performance series, the decision
// outcomes) writes its cells here, so none can forget the rule below.
// It owns RFC 4180 cells and lines (CRLF, a trailing CRLF) and formula-injection neutralisation as
// OWASP ("CSV Injection") describes it. A spreadsheet runs a cell that starts with =, +, - or @
// (or a TAB or CR), also after leading spaces or quotes, as a formula: `=HYPERLINK(...)` in an
// agent's symbol would run on the reader's machine. So a TEXT cell (anything an agent wrote, and
// every other string) that could start one is written as `'` + the text, quoted. A NUMBER cell is
// a value the service formatted itself (a seq, a price, a return such as -0.05): it goes out as is,
// so it stays a number, and only while it is a plain decimal; anything else in it is text.

export type CsvCell =
  | { kind: 'text'; value: string | null }
  | { kind: 'number'; value: string | number | null }
  | { kind: 'boolean'; value: boolean | null };

export const csvText = (value: string | null): CsvCell => ({ kind: 'text', value });
export const csvNumber = (value: string | number | null): CsvCell => ({ kind: 'number', value });
export const csvBoolean = (value: boolean | null): CsvCell => ({ kind: 'boolean', value });

/** A decimal as the service writes one: an optional minus, digits, a fraction, an exponent. */
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Where a spreadsheet could start a formula: =, +, -, @ (and their full-width forms, which some
 * locales take for them), after any run of whitespace and quotes; or a TAB or CR first.
 */
const FORMULA_START = /^(?:[\t\r]|[\s"']*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/u;

/** What makes a cell need quotes: RFC 4180's comma, quote and line breaks, and the `;` and TAB other locales split on. */
const NEEDS_QUOTES = /[",;\t\r\n]/;

const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** A text cell: neutralised when a spreadsheet could read it as a formula, quoted when it must be. */
export function csvTextCell(s: string): string {
  if (FORMULA_START.test(s)) return quoted(`'${s}`);
  return NEEDS_QUOTES.test(s) ? quoted(s) : s;
}

/** One cell as written; null is an empty field. */
export function csvCell(cell: CsvCell): string {
  if (cell.value === null) return '';
  if (cell.kind === 'boolean') return cell.value ? 'true' : 'false';
  const s = String(cell.value);
  return cell.kind === 'number' && PLAIN_DECIMAL.test(s) ? s : csvTextCell(s);
}

/** A whole CSV document: the header row (the service's own column names), then one line per row. */
export function csvDocument(columns: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [columns.map(csvTextCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return lines.join('\r\n') + '\r\n';
}
