// canon_v1 Decimals (§2): grammar, normalised form and exact comparison.
// Owns: everything about decimal text. Pure string arithmetic; no float ever touches a value.

/** The JSON number grammar of canon_v1 §2, anchored, usable as a JSON-schema `pattern`. */
export const DECIMAL_PATTERN = '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$';

/** Longest allowed normalised form, sign included. */
export const MAX_DECIMAL_LENGTH = 64;

const NORMALISED = /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * Normalised form of canon_v1 §2: no exponent, no `+`, no superfluous zeros, `-` only for
 * non-zero negatives. The output length is computed before any string is built, so
 * `1e999999999` is refused without allocating.
 */
export function normaliseDecimal(
  text: string,
): { ok: true; value: string } | { ok: false; reason: 'grammar' | 'too_long' } {
  const grammar = { ok: false as const, reason: 'grammar' as const };
  const tooLong = { ok: false as const, reason: 'too_long' as const };
  if (typeof text !== 'string') return grammar;
  const n = text.length;
  let i = 0;
  let negative = false;
  if (text.charCodeAt(0) === 0x2d) {
    negative = true;
    i = 1;
  }
  const intStart = i;
  const c0 = text.charCodeAt(i);
  if (c0 === 0x30) i++;
  else if (c0 >= 0x31 && c0 <= 0x39) {
    i++;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
  } else return grammar;
  const intEnd = i;
  let fracStart = i;
  let fracEnd = i;
  if (i < n && text.charCodeAt(i) === 0x2e) {
    i++;
    fracStart = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i === fracStart) return grammar;
    fracEnd = i;
  }
  let expNegative = false;
  let expStart = i;
  let expEnd = i;
  if (i < n && (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45)) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 0x2b || s === 0x2d) {
      expNegative = s === 0x2d;
      i++;
    }
    expStart = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i === expStart) return grammar;
    expEnd = i;
  }
  if (i !== n) return grammar;

  // value = digits × 10^(exponent − fractionLength)
  const digits = text.slice(intStart, intEnd) + text.slice(fracStart, fracEnd);
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 0x30) first++;
  if (first === digits.length) return { ok: true, value: '0' }; // zero, whatever its sign or exponent
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === 0x30) last--;
  const significand = digits.slice(first, last + 1);
  const trailingZeros = digits.length - 1 - last;

  let expDigitsStart = expStart;
  while (expDigitsStart < expEnd && text.charCodeAt(expDigitsStart) === 0x30) expDigitsStart++;
  // More than 15 significant exponent digits means |exponent| >= 10^15, far beyond any string
  // length a runtime can hold, so the normalised form would be astronomically long.
  if (expEnd - expDigitsStart > 15) return tooLong;
  const expMagnitude = expEnd > expDigitsStart ? Number(text.slice(expDigitsStart, expEnd)) : 0;
  const exponent = (expNegative ? -expMagnitude : expMagnitude) - (fracEnd - fracStart) + trailingZeros;

  // Now value = significand × 10^exponent, significand without leading or trailing zeros.
  const sigLen = significand.length;
  const sign = negative ? 1 : 0;
  let length: number;
  if (exponent >= 0) length = sigLen + exponent;
  else if (-exponent < sigLen) length = sigLen + 1;
  else length = 2 - exponent;
  if (length + sign > MAX_DECIMAL_LENGTH) return tooLong;

  let body: string;
  if (exponent >= 0) body = significand + '0'.repeat(exponent);
  else if (-exponent < sigLen) body = `${significand.slice(0, sigLen + exponent)}.${significand.slice(sigLen + exponent)}`;
  else body = `0.${'0'.repeat(-exponent - sigLen)}${significand}`;
  return { ok: true, value: negative ? `-${body}` : body };
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
