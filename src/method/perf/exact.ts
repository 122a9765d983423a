// Exact decimals of perf_v1: the arithmetic of decimal.js configured as { precision: 40, rounding:
// ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 }, reproduced to the byte on a BigInt coefficient
// and a decimal exponent (value = c × 10^e), without decimal.js's digit arrays and their garbage.
// It handles these itself: reading plain decimal text and numbers; + − × rounded to 40 significant
// digits half-even from the exact result, ÷ correctly rounded to 40 digits; comparison; rounding to
// decimal places; the texts and doubles decimal.js gives, signed zero and its exponent limits
// (±9e15) included. Everything else goes to decimal.js itself, so that nothing can differ: text
// that is not a plain decimal (hex, binary, octal, "Infinity", "NaN", "1_000", junk: accepted or
// refused by it), and any operation on a non-finite value or dividing by zero. The differential
// property test against decimal.js is test/performance/exact.test.ts.
import { Decimal } from 'decimal.js';

/** Significant digits of every arithmetic result. */
export const PRECISION = 40;
export const ROUND_UP = 0;
export const ROUND_DOWN = 1;
export const ROUND_CEIL = 2;
export const ROUND_FLOOR = 3;
export const ROUND_HALF_UP = 4;
export const ROUND_HALF_DOWN = 5;
export const ROUND_HALF_EVEN = 6;
export const ROUND_HALF_CEIL = 7;
export const ROUND_HALF_FLOOR = 8;
/** decimal.js's rounding modes, by its numbers. */
export type Rounding = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** decimal.js as configured for perf_v1: the reference, and the fallback for what is not plain. */
export const Reference = Decimal.clone({ precision: PRECISION, rounding: ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 });
export type Reference = InstanceType<typeof Reference>;

export type Value = string | number | bigint | Exact;

/** decimal.js's exponent limits (maxE, minE: the exponent of the leading digit): beyond, ±Infinity and ±0. */
const MAX_E = 9e15;
const MIN_E = -9e15;
/** Exponents within this bound cannot put a result of up to 40 digits beyond the limits: no check. */
const SAFE_E = 8e15;
/** Exponent gaps up to this are aligned directly; beyond, the smaller operand may be cut to a sticky digit. */
const NEAR = 60;

const POW: bigint[] = [];
for (let i = 0, p = 1n; i <= 128; i++, p *= 10n) POW.push(p);
/** Half of each power of ten (the tie of a cut of k digits); HALF[0] is unused. */
const HALF = POW.map((p) => p >> 1n);
const LIMIT = POW[PRECISION] as bigint;
const NEG_LIMIT = -LIMIT;

const pow10 = (k: number): bigint => (k < POW.length ? (POW[k] as bigint) : 10n ** BigInt(k));
const abs = (c: bigint): bigint => (c < 0n ? -c : c);

/** The number of decimal digits of m > 0. */
function digits(m: bigint): number {
  if (m >= (POW[PRECISION - 1] as bigint) && m < LIMIT) return PRECISION; // every rounded result but a few
  if (m >= (POW[128] as bigint)) return m.toString().length;
  let lo = 0; // 10^lo <= m < 10^hi
  let hi = 128;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (m >= (POW[mid] as bigint)) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * m ≥ 0 with its last k ≥ 1 digits cut by rounding mode rm (`neg`: the sign of the value; `sticky`:
 * something nonzero was already cut below m), as decimal.js's finalise decides it.
 */
function cut(m: bigint, k: number, rm: Rounding, neg: boolean, sticky: boolean): bigint {
  if (k > NEAR && k > digits(m) + 1) return cutSmall(m !== 0n || sticky, rm, neg); // m < a tenth of the unit
  const p = pow10(k);
  const q = m / p;
  if (rm === ROUND_DOWN) return q;
  const r = m % p;
  if (r === 0n && !sticky) return q;
  if (rm < ROUND_HALF_UP) return rm === ROUND_UP || rm === (neg ? ROUND_FLOOR : ROUND_CEIL) ? q + 1n : q;
  const half = k < HALF.length ? (HALF[k] as bigint) : p >> 1n;
  if (r !== half || sticky) return r > half || (r === half && sticky) ? q + 1n : q;
  const up = rm === ROUND_HALF_UP || (rm === ROUND_HALF_EVEN && (q & 1n) === 1n) || rm === (neg ? ROUND_HALF_FLOOR : ROUND_HALF_CEIL);
  return up ? q + 1n : q;
}

/** cut() of a value below a tenth of the unit: 1 or 0. */
function cutSmall(inexact: boolean, rm: Rounding, neg: boolean): bigint {
  return inexact && (rm === ROUND_UP || rm === (neg ? ROUND_FLOOR : ROUND_CEIL)) ? 1n : 0n;
}

/** The exponent of an arithmetic result after rounding (set by round40). */
let roundedE = 0;

/**
 * c (|c| ≥ 10^40, of `count` digits when known) rounded to 40 significant digits half-even; its
 * exponent e moves to roundedE.
 */
function round40(c: bigint, e: number, sticky: boolean, count = 0): bigint {
  const neg = c < 0n;
  const m = neg ? -c : c;
  let k = (count || digits(m)) - PRECISION;
  let q = cut(m, k, ROUND_HALF_EVEN, neg, sticky);
  if (q === LIMIT) {
    q = POW[PRECISION - 1] as bigint;
    k++;
  }
  roundedE = e + k;
  return neg ? -q : q;
}

/** An arithmetic result c × 10^e (a zero with the sign `negZero`), rounded and limited as decimal.js does. */
function result(c: bigint, e: number, negZero: boolean): Exact {
  if (c === 0n) return new Exact(0n, 0, negZero, null);
  if (c >= LIMIT || c <= NEG_LIMIT) {
    c = round40(c, e, false);
    e = roundedE;
  }
  if (e > SAFE_E || e < -SAFE_E) return limited(c, e, c < 0n);
  return new Exact(c, e, c < 0n, null);
}

/** A value whose exponent may be beyond decimal.js's limits: ±Infinity above, ±0 below. */
function limited(c: bigint, e: number, neg: boolean): Exact {
  if (c === 0n) return new Exact(0n, 0, neg, null);
  const top = e + digits(abs(c)) - 1;
  if (top > MAX_E) return fromReference(new Reference(neg ? -Infinity : Infinity));
  if (top < MIN_E) return new Exact(0n, 0, neg, null);
  return new Exact(c, e, neg, null);
}

// ---------------------------------------------------------------------------------------------
// Reading

/** What read() found (set, not returned: no allocation per parse). */
let readC = 0n;
let readE = 0;
let readNeg = false;
let readNf: Reference | null = null;

const isDigit = (ch: number): boolean => ch >= 48 && ch <= 57;

/**
 * Plain decimal text, decimal.js's grammar: one optional sign, then /^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.
 * False when the text is anything else, or its exponent has more than `expDigits` digits (so that
 * every exponent is exact as a double and within decimal.js's limits), for decimal.js to read.
 */
function readPlain(t: string, expDigits = 15): boolean {
  const n = t.length;
  let i = 0;
  let ch = t.charCodeAt(0);
  const neg = ch === 45;
  if (neg || ch === 43) i = 1;
  const intStart = i;
  let small = 0;
  while (i < n && isDigit((ch = t.charCodeAt(i)))) {
    small = small * 10 + (ch - 48);
    i++;
  }
  const intEnd = i;
  let fracStart = i;
  if (i < n && ch === 46) fracStart = ++i;
  while (i < n && isDigit((ch = t.charCodeAt(i)))) {
    small = small * 10 + (ch - 48);
    i++;
  }
  const fracLen = i - fracStart;
  const count = intEnd - intStart + fracLen;
  if (count === 0) return false;
  let exp = 0;
  if (i < n) {
    if (ch !== 101 && ch !== 69) return false;
    ch = t.charCodeAt(++i);
    const expNeg = ch === 45;
    if (expNeg || ch === 43) i++;
    const expStart = i;
    while (i < n && isDigit((ch = t.charCodeAt(i)))) {
      exp = exp * 10 + (ch - 48);
      i++;
    }
    if (i < n || i === expStart || i - expStart > expDigits) return false;
    if (expNeg) exp = -exp;
  }
  let c: bigint;
  if (count <= 15) c = BigInt(small);
  else c = BigInt(fracLen === 0 ? t.slice(intStart, intEnd) : t.slice(intStart, intEnd) + t.slice(fracStart, fracStart + fracLen));
  readC = neg ? -c : c;
  readE = c === 0n ? 0 : exp - fracLen;
  readNeg = neg;
  readNf = null;
  return true;
}

function readReference(d: Reference): void {
  readNeg = d.isNeg();
  if (!d.isFinite()) {
    readC = 0n;
    readE = 0;
    readNf = d;
    return;
  }
  const t = d.toString(); // its exponent, within ±9e15, may have 16 digits; "-0" prints as "0"
  readPlain(readNeg && t.charCodeAt(0) !== 45 ? '-' + t : t, 16);
}

/** Any value the decimal.js constructor takes, read as it reads it (and refused as it refuses it). */
function read(v: unknown): void {
  if (typeof v === 'string') {
    if (!readPlain(v)) readReference(new Reference(v));
  } else if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) {
      readC = BigInt(v);
      readE = 0;
      readNeg = v < 0 || Object.is(v, -0);
      readNf = null;
    } else if (!Number.isFinite(v) || !readPlain(String(v))) {
      readReference(new Reference(v));
    }
  } else if (typeof v === 'bigint') {
    readC = v;
    readE = 0;
    readNeg = v < 0n;
    readNf = null;
  } else if (v instanceof Exact) {
    readC = v.c;
    readE = v.e;
    readNeg = v.negative;
    readNf = v.nf;
  } else {
    readReference(new Reference(v as Decimal.Value));
  }
}

// ---------------------------------------------------------------------------------------------
// The decimal

/** An immutable decimal with decimal.js's interface (the part perf_v1 uses) and its exact results. */
export class Exact {
  /** The coefficient, signed: the value is c × 10^e. 0 for a non-finite value. */
  readonly c: bigint;
  readonly e: number;
  /** Negative, −0 included (as decimal.js's isNeg()). */
  readonly negative: boolean;
  /** A non-finite value (NaN, ±Infinity) as decimal.js holds it; null for every finite one. */
  readonly nf: Reference | null;

  /** A decimal from text, a number or a bigint, exactly as decimal.js reads it (no rounding). */
  constructor(v: Value);
  /** Internal: c × 10^e, `negative` the sign (of a zero too), or the non-finite `nf`. */
  constructor(c: bigint, e: number, negative: boolean, nf: Reference | null);
  constructor(v: Value, e?: number, negative?: boolean, nf?: Reference | null) {
    if (e !== undefined) {
      this.c = v as bigint;
      this.e = e;
      this.negative = negative as boolean;
      this.nf = nf ?? null;
      return;
    }
    read(v);
    this.c = readC;
    this.e = readE;
    this.negative = readNeg;
    this.nf = readNf;
  }

  plus(y: Value): Exact {
    const b = of(y);
    if (this.nf !== null || b.nf !== null) return viaReference(this, b, 'plus');
    return add(this, b.c, b.e, b.negative);
  }

  minus(y: Value): Exact {
    const b = of(y);
    if (this.nf !== null || b.nf !== null) return viaReference(this, b, 'minus');
    return add(this, -b.c, b.e, !b.negative);
  }

  times(y: Value): Exact {
    const b = of(y);
    if (this.nf !== null || b.nf !== null) return viaReference(this, b, 'times');
    const c = this.c * b.c;
    return result(c, this.e + b.e, this.negative !== b.negative);
  }

  div(y: Value): Exact {
    const b = of(y);
    if (this.nf !== null || b.nf !== null || b.c === 0n) return viaReference(this, b, 'div');
    if (this.c === 0n) return new Exact(0n, 0, this.negative !== b.negative, null);
    return quotient(this, b);
  }

  neg(): Exact {
    if (this.nf !== null) return fromReference(this.nf.neg());
    return new Exact(-this.c, this.e, !this.negative, null);
  }

  abs(): Exact {
    if (this.nf !== null) return fromReference(this.nf.abs());
    return this.negative ? new Exact(-this.c, this.e, false, null) : this;
  }

  /** 1, −1 or 0 (−0 equals 0), NaN when either is NaN. */
  cmp(y: Value): number {
    const b = of(y);
    if (this.nf !== null || b.nf !== null) return toReference(this).cmp(toReference(b));
    return compare(this.c, this.e, b.c, b.e);
  }

  eq(y: Value): boolean {
    return this.cmp(y) === 0;
  }

  lt(y: Value): boolean {
    return this.cmp(y) < 0;
  }

  lte(y: Value): boolean {
    return this.cmp(y) < 1;
  }

  gt(y: Value): boolean {
    return this.cmp(y) > 0;
  }

  gte(y: Value): boolean {
    const k = this.cmp(y);
    return k === 1 || k === 0;
  }

  isZero(): boolean {
    return this.c === 0n && this.nf === null;
  }

  isFinite(): boolean {
    return this.nf === null;
  }

  isNeg(): boolean {
    return this.negative;
  }

  /** Rounded to `dp` decimal places (not to 40 digits), keeping the sign of a zero. */
  toDecimalPlaces(dp: number, rm: Rounding = ROUND_HALF_EVEN): Exact {
    checkPlaces(dp, rm);
    if (this.nf !== null) return fromReference(this.nf.toDecimalPlaces(dp, rm));
    if (this.e >= -dp) return this;
    const q = cut(abs(this.c), -dp - this.e, rm, this.negative, false);
    return new Exact(this.negative ? -q : q, -dp, this.negative, null);
  }

  /** Without `dp`, the plain text (never an exponent); with it, exactly `dp` decimal places. "-" only when not zero. */
  toFixed(dp?: number, rm: Rounding = ROUND_HALF_EVEN): string {
    if (this.nf !== null) return dp === undefined ? this.nf.toFixed() : this.nf.toFixed(dp, rm);
    if (dp === undefined) return (this.negative && this.c !== 0n ? '-' : '') + plainText(this);
    checkPlaces(dp, rm);
    const m = abs(this.c);
    const scaled = this.e >= -dp ? m * pow10(this.e + dp) : cut(m, -dp - this.e, rm, this.negative, false);
    return (this.negative && this.c !== 0n ? '-' : '') + withPlaces(scaled.toString(), dp);
  }

  /** decimal.js's toString: an exponent when the leading digit's is ≤ −100 or ≥ 100; "-0" prints as "0". */
  toString(): string {
    if (this.nf !== null) return this.nf.toString();
    return (this.negative && this.c !== 0n ? '-' : '') + text(this);
  }

  /** As toString, but −0 prints as "-0" (decimal.js's valueOf and toJSON). */
  valueOf(): string {
    if (this.nf !== null) return this.nf.valueOf();
    return (this.negative ? '-' : '') + text(this);
  }

  toJSON(): string {
    return this.valueOf();
  }

  /** The nearest double (of valueOf's text, as decimal.js does); −0 stays −0. */
  toNumber(): number {
    if (this.nf !== null) return this.nf.toNumber();
    return Number((this.negative ? '-' : '') + abs(this.c).toString() + 'e' + this.e);
  }
}

/** Small whole numbers as operands (div(100), lte(0)): read once. */
const SMALL: Exact[] = [];
for (let i = 0; i < 128; i++) SMALL.push(new Exact(i));

function of(y: Value): Exact {
  if (y instanceof Exact) return y;
  if (typeof y === 'number' && y === (y & 127) && 1 / y > 0) return SMALL[y] as Exact; // not −0
  return new Exact(y);
}

function checkPlaces(dp: number, rm: number): void {
  if (dp !== ~~dp || dp < 0 || dp > 1e9) throw Error('[DecimalError] Invalid argument: ' + dp);
  if (rm !== ~~rm || rm < 0 || rm > 8) throw Error('[DecimalError] Invalid argument: ' + rm);
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

/** x + y, y given as its parts (minus passes −y); exact, then rounded to 40 digits. */
function add(x: Exact, yc: bigint, ye: number, yneg: boolean): Exact {
  const xc = x.c;
  if (yc === 0n) return xc === 0n ? new Exact(0n, 0, x.negative && yneg, null) : result(xc, x.e, false);
  if (xc === 0n) return result(yc, ye, false);
  const gap = x.e - ye;
  if (gap === 0) return result(xc + yc, ye, false);
  if (gap > 0 && gap <= NEAR) return result(xc * (POW[gap] as bigint) + yc, ye, false);
  if (gap < 0 && gap >= -NEAR) return result(xc + yc * (POW[-gap] as bigint), x.e, false);
  return addFar(xc, x.e, yc, ye);
}

/**
 * A sum whose exponents are far apart. When the smaller operand lies wholly below both the
 * larger one's last digit and its 41st, it is replaced by one unit (of its sign) at a place
 * T = min(last digit, 41st) − 2: the digits of the sum down to place T+1 are the same (those of
 * the larger, or for a difference, those of the larger less 10^(T+1)), the rounding digit lies
 * above them, and something nonzero lies below in both. So the rounded sum is the same, without
 * aligning to an exponent perhaps millions of places away.
 */
function addFar(xc: bigint, xe: number, yc: bigint, ye: number): Exact {
  const xTop = xe + digits(abs(xc)) - 1;
  const yTop = ye + digits(abs(yc)) - 1;
  if (xTop > yTop) {
    const place = Math.min(xe, xTop - PRECISION - 1) - 2;
    if (yTop <= place) return result(xc * pow10(xe - place) + (yc < 0n ? -1n : 1n), place, false);
  } else if (yTop > xTop) {
    const place = Math.min(ye, yTop - PRECISION - 1) - 2;
    if (xTop <= place) return result(yc * pow10(ye - place) + (xc < 0n ? -1n : 1n), place, false);
  }
  return xe > ye ? result(xc * pow10(xe - ye) + yc, ye, false) : result(xc + yc * pow10(ye - xe), xe, false);
}

/**
 * x ÷ y (both finite and nonzero) correctly rounded: an integer quotient of 40 or 41 digits and
 * its remainder r. Of 40, it is rounded by comparing 2r with the divisor; of 41, its last digit is
 * cut with the remainder as sticky.
 */
function quotient(x: Exact, y: Exact): Exact {
  const a = abs(x.c);
  const b = abs(y.c);
  const shift = PRECISION + digits(b) - digits(a); // 10^39 < a × 10^shift ÷ b < 10^41
  const num = shift >= 0 ? a * pow10(shift) : a;
  const den = shift >= 0 ? b : b * pow10(-shift);
  let q = num / den;
  const r = num % den;
  let e = x.e - y.e - shift;
  if (q >= LIMIT) {
    q = round40(q, e, r !== 0n, PRECISION + 1);
    e = roundedE;
  } else if (r !== 0n) {
    const twice = r << 1n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
    if (q === LIMIT) {
      q = POW[PRECISION - 1] as bigint;
      e++;
    }
  }
  const neg = x.negative !== y.negative;
  if (neg) q = -q;
  if (e > SAFE_E || e < -SAFE_E) return limited(q, e, neg);
  return new Exact(q, e, neg, null);
}

/** The order of xc × 10^xe and yc × 10^ye. */
function compare(xc: bigint, xe: number, yc: bigint, ye: number): number {
  if (xe === ye) return xc < yc ? -1 : xc > yc ? 1 : 0;
  const xs = xc > 0n ? 1 : xc < 0n ? -1 : 0;
  const ys = yc > 0n ? 1 : yc < 0n ? -1 : 0;
  if (xs !== ys) return xs > ys ? 1 : -1;
  if (xs === 0) return 0;
  const gap = xe - ye;
  if (gap > NEAR || gap < -NEAR) {
    const xTop = xe + digits(abs(xc));
    const yTop = ye + digits(abs(yc));
    if (xTop !== yTop) return (xTop > yTop) === xs > 0 ? 1 : -1;
  }
  const x = gap > 0 ? xc * pow10(gap) : xc;
  const y = gap < 0 ? yc * pow10(-gap) : yc;
  return x < y ? -1 : x > y ? 1 : 0;
}

function toReference(x: Exact): Reference {
  return x.nf ?? new Reference((x.negative ? '-' : '') + abs(x.c).toString() + 'e' + x.e);
}

function fromReference(d: Reference): Exact {
  readReference(d);
  return new Exact(readC, readE, readNeg, readNf);
}

/** An operation on a non-finite value (or a division by zero), done by decimal.js. */
function viaReference(x: Exact, y: Exact, op: 'plus' | 'minus' | 'times' | 'div'): Exact {
  return fromReference(toReference(x)[op](toReference(y)));
}

// ---------------------------------------------------------------------------------------------
// Texts

/** The digits of |c| without trailing zeros, and the exponent that goes with them. */
let normalE = 0;
function normalDigits(x: Exact): string {
  const s = abs(x.c).toString();
  let end = s.length;
  while (end > 1 && s.charCodeAt(end - 1) === 48) end--;
  normalE = x.c === 0n ? 0 : x.e + (s.length - end);
  return end === s.length ? s : s.slice(0, end);
}

/** |x| as plain text: no exponent, no trailing zeros. */
function plainText(x: Exact): string {
  return plain(normalDigits(x), normalE);
}

/** Digits s (no trailing zeros; "0" for zero) times 10^e, written without an exponent. */
function plain(s: string, e: number): string {
  if (e >= 0) return e === 0 ? s : s + '0'.repeat(e);
  const point = s.length + e;
  return point > 0 ? s.slice(0, point) + '.' + s.slice(point) : '0.' + '0'.repeat(-point) + s;
}

/** |x| as decimal.js's toString writes it. */
function text(x: Exact): string {
  const s = normalDigits(x);
  const top = normalE + s.length - 1;
  if (top > -100 && top < 100) return plain(s, normalE);
  return s.charAt(0) + (s.length > 1 ? '.' + s.slice(1) : '') + (top < 0 ? 'e' : 'e+') + top;
}

/** Digits of a value scaled by 10^dp, written with dp decimal places. */
function withPlaces(s: string, dp: number): string {
  if (dp === 0) return s;
  if (s.length <= dp) s = '0'.repeat(dp + 1 - s.length) + s;
  return s.slice(0, s.length - dp) + '.' + s.slice(s.length - dp);
}
