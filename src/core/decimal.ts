// canon_v1 Decimals (§2): grammar, normalised form and exact comparison.
// It owns everything about decimal text. Pure string arithmetic; no float ever touches a value.

/** The JSON number grammar of canon_v1 §2, anchored, usable as a JSON-schema `pattern`. */
export const DECIMAL_PATTERN = '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$';

/** Longest allowed normalised form, sign included. */
export const MAX_DECIMAL_LENGTH = 64;

const NORMALISED = /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Where the parts of a decimal's text are: [start, end) offsets of its digit runs, and its signs. */
type DecimalText = { negative: boolean; int: [number, number]; frac: [number, number]; exp: [number, number]; expNegative: boolean };

/** The index after the digits that start at `i`. */
function digitsEnd(text: string, i: number): number {
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  return i;
}

/** Reads `text` against the grammar of canon_v1 §2; null when it does not match. */
function scanDecimal(text: string): DecimalText | null {
  const n = text.length;
  const negative = text.charCodeAt(0) === 0x2d;
  let i = negative ? 1 : 0;
  const intStart = i;
  const c0 = text.charCodeAt(i);
  if (c0 === 0x30) i++;
  else if (c0 >= 0x31 && c0 <= 0x39) i = digitsEnd(text, i + 1);
  else return null;
  const int: [number, number] = [intStart, i];
  let frac: [number, number] = [i, i];
  if (i < n && text.charCodeAt(i) === 0x2e) {
    const end = digitsEnd(text, i + 1);
    if (end === i + 1) return null;
    frac = [i + 1, end];
    i = end;
  }
  let exp: [number, number] = [i, i];
  let expNegative = false;
  if (i < n && (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45)) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 0x2b || s === 0x2d) {
      expNegative = s === 0x2d;
      i++;
    }
    const end = digitsEnd(text, i);
    if (end === i) return null;
    exp = [i, end];
    i = end;
  }
  return i === n ? { negative, int, frac, exp, expNegative } : null;
}

/** The value as significand × 10^exponent, the significand without leading or trailing zeros; null for zero, 'too_long' past any representable length. */
function magnitudeOf(text: string, parts: DecimalText): { significand: string; exponent: number } | null | 'too_long' {
  const digits = text.slice(...parts.int) + text.slice(...parts.frac);
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 0x30) first++;
  if (first === digits.length) return null;
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === 0x30) last--;
  const [expStart, expEnd] = parts.exp;
  let expDigitsStart = expStart;
  while (expDigitsStart < expEnd && text.charCodeAt(expDigitsStart) === 0x30) expDigitsStart++;
  // More than 15 significant exponent digits means |exponent| >= 10^15, far beyond any string
  // length a runtime can hold, so the normalised form would be astronomically long.
  if (expEnd - expDigitsStart > 15) return 'too_long';
  const expMagnitude = expEnd > expDigitsStart ? Number(text.slice(expDigitsStart, expEnd)) : 0;
  const trailingZeros = digits.length - 1 - last;
  const exponent = (parts.expNegative ? -expMagnitude : expMagnitude) - (parts.frac[1] - parts.frac[0]) + trailingZeros;
  return { significand: digits.slice(first, last + 1), exponent };
}

/** The length of significand × 10^exponent written out, computed before any string is built. */
function writtenLength(sigLen: number, exponent: number): number {
  if (exponent >= 0) return sigLen + exponent;
  return -exponent < sigLen ? sigLen + 1 : 2 - exponent;
}

function writeOut(significand: string, exponent: number): string {
  const sigLen = significand.length;
  if (exponent >= 0) return significand + '0'.repeat(exponent);
  if (-exponent < sigLen) return `${significand.slice(0, sigLen + exponent)}.${significand.slice(sigLen + exponent)}`;
  return `0.${'0'.repeat(-exponent - sigLen)}${significand}`;
}

/**
 * Normalised form of canon_v1 §2: no exponent, no `+`, no superfluous zeros, `-` only for
 * non-zero negatives. The output length is computed before any string is built, so
 * `1e999999999` is refused without allocating.
 */
export function normaliseDecimal(
  text: string,
): { ok: true; value: string } | { ok: false; reason: 'grammar' | 'too_long' } {
  const parts = typeof text === 'string' ? scanDecimal(text) : null;
  if (!parts) return { ok: false, reason: 'grammar' };
  const magnitude = magnitudeOf(text, parts);
  if (magnitude === null) return { ok: true, value: '0' }; // zero, whatever its sign or exponent
  if (magnitude === 'too_long') return { ok: false, reason: 'too_long' };
  const { significand, exponent } = magnitude;
  if (writtenLength(significand.length, exponent) + (parts.negative ? 1 : 0) > MAX_DECIMAL_LENGTH) return { ok: false, reason: 'too_long' };
  const body = writeOut(significand, exponent);
  return { ok: true, value: parts.negative ? `-${body}` : body };
}

/** True when `s` is already in normalised form. */
export function isNormalisedDecimal(s: string): boolean {
  return typeof s === 'string' && s.length <= MAX_DECIMAL_LENGTH && NORMALISED.test(s) && s !== '-0';
}

function compareMagnitude(a: string, b: string): -1 | 0 | 1 {
  const pa = a.indexOf('.');
  const pb = b.indexOf('.');
  const ia = pa < 0 ? a : a.slice(0, pa);
  const ib = pb < 0 ? b : b.slice(0, pb);
  if (ia.length !== ib.length) return ia.length < ib.length ? -1 : 1;
  if (ia !== ib) return ia < ib ? -1 : 1;
  // Without trailing zeros, plain string order of the fraction digits is numeric order.
  const fa = pa < 0 ? '' : a.slice(pa + 1);
  const fb = pb < 0 ? '' : b.slice(pb + 1);
  if (fa === fb) return 0;
  return fa < fb ? -1 : 1;
}

/** Exact comparison of two normalised decimal strings; throws TypeError on anything else. */
export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  if (!isNormalisedDecimal(a)) throw new TypeError(`compareDecimal: not a normalised decimal: ${JSON.stringify(a)}`);
  if (!isNormalisedDecimal(b)) throw new TypeError(`compareDecimal: not a normalised decimal: ${JSON.stringify(b)}`);
  const na = a.charCodeAt(0) === 0x2d;
  const nb = b.charCodeAt(0) === 0x2d;
  if (na !== nb) return na ? -1 : 1; // normalised negatives are non-zero
  const m = compareMagnitude(na ? a.slice(1) : a, nb ? b.slice(1) : b);
  return na ? ((-m || 0) as -1 | 0 | 1) : m;
}
