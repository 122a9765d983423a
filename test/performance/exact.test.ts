// Exact (src/method/perf/exact.ts), the decimals of perf_v1, against decimal.js configured as
// perf_v1 configured it (40 significant digits, half-even, toExpNeg −100, toExpPos 100): every
// text, double and comparison it gives must be decimal.js's, to the byte. Random decimals (zeros
// of both signs, up to 55 digits, exponents near and far, values that round at the 40th digit and
// ties), each operation, chains of them, and what decimal.js refuses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Exact, ROUND_DOWN, ROUND_HALF_EVEN, Reference, type Rounding } from '../../src/method/perf/exact.ts';
import { nightly, propertyRuns } from '../property/runs.ts';

/** CI's size, or LEDGER_PROPERTY_RUNS cases per property (the nightly mode), without a timeout. */
function runs(ci: number): number {
  if (!nightly()) return ci;
  const { mutated, anything } = propertyRuns('sqlite'); // the whole LEDGER_PROPERTY_RUNS, validated
  return mutated + anything;
}
const TIMEOUT = nightly() ? { timeout: Infinity } : {};

type Num = Exact | Reference;
type Op = 'plus' | 'minus' | 'times' | 'div';
const OPS: Op[] = ['plus', 'minus', 'times', 'div'];
const MODES: Rounding[] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

// ---- arbitraries -------------------------------------------------------------------------

const digitRun = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

/** Coefficient digits: short, long, ties and near ties at the 41st digit, powers of ten, runs of nines. */
const coefficient = fc.oneof(
  { weight: 4, arbitrary: digitRun(1, 18) },
  { weight: 2, arbitrary: digitRun(1, 55) },
  { weight: 2, arbitrary: fc.tuple(digitRun(39, 41), fc.constantFrom('5', '50', '5000000', '49999', '50001', '4', '6', '15', '25')).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 50 }), fc.constantFrom('0', '9')).map(([n, d]) => '1' + d.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 55 }).map((n) => '9'.repeat(n)) },
);

/** Exponents: none, small, beyond toExpPos/toExpNeg, far, and near decimal.js's limits (±9e15). */
const exponent = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 4, arbitrary: fc.integer({ min: -60, max: 60 }).map(String) },
  { weight: 2, arbitrary: fc.integer({ min: -400, max: 400 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: -10_000_000, max: 10_000_000 }).map(String) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(-1, 1), fc.constantFrom(4.5e15, 9e15), fc.integer({ min: -60, max: 60 })).map(([s, base, d]) => String(s * (base + d))) },
).chain((e) => (e === '' ? fc.constant('') : fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+')).map(([m, plus]) => m + (e.startsWith('-') ? e : plus + e))));

/** Plain decimal text: a sign, leading zeros, the point anywhere ("1." and ".5" included), an exponent. */
const decimalText = fc
  .record({ sign: fc.constantFrom('', '', '-', '+'), zeros: fc.constantFrom('', '', '', '0', '000'), digits: coefficient, point: fc.option(fc.nat()), exp: exponent })
  .map(({ sign, zeros, digits, point, exp }) => {
    const body = zeros + digits;
    if (point === null) return sign + body + exp;
    const p = point % (body.length + 1);
    return sign + body.slice(0, p) + '.' + body.slice(p) + exp;
  });

/** Realistic figures: money, prices and 8-decimal quantities. */
const figure = fc
  .tuple(fc.constantFrom('', '', '', '-'), fc.integer({ min: 0, max: 10_000_000 }), fc.constantFrom(0, 1, 2, 4, 6, 8), fc.nat(99_999_999))
  .map(([sign, whole, places, frac]) => sign + whole + (places === 0 ? '' : '.' + String(frac).padStart(8, '0').slice(0, places)));

const zeroText = fc.constantFrom('0', '-0', '+0', '0.000', '-0.0', '-0e7', '0e-5', '.0', '-.00', '00', '0e9000000000000001', '-0e-99999999999999999');

/** Not plain decimals: decimal.js reads some (hex, binary, octal, Infinity, NaN, "1_000") and refuses the rest. */
const otherText = fc.constantFrom(
  'Infinity', '-Infinity', '+Infinity', 'NaN', '-NaN', '0x1f', '-0x1F', '0b101', '0o17', '0x1.8p3', '0x1p-2', '0b1p100', '0x.8', '1_000', '1_000.5',
  '1e9000000000000001', '1e-9000000000000001', '-1e9000000000000000', '1e0000000000000000005', '7e-09000000000000000',
  '', ' ', ' 1', '1 ', '1e', '1e+', '.', '-', '+', '--1', '+-1', '-+1', '1.2.3', 'e5', '.e5', 'abc', '١٢', '1,5', '0x', '1e5.5', 'inf', '∞',
);

const numberValue = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, 0, 1e21, -1e-7, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE, 1e7, 9999999));

const anything = fc.oneof(
  { weight: 8, arbitrary: decimalText as fc.Arbitrary<string | number> },
  { weight: 3, arbitrary: figure },
  { weight: 1, arbitrary: zeroText },
  { weight: 1, arbitrary: otherText },
  { weight: 2, arbitrary: numberValue },
);

const reads = (v: string | number): boolean => {
  try {
    new Reference(v);
    return true;
  } catch {
    return false;
  }
};
const operand = anything.filter(reads);

// ---- comparison --------------------------------------------------------------------------

const numberText = (n: number): string => (Object.is(n, -0) ? '-0' : String(n));

/**
 * Everything perf_v1 reads off a decimal. Texts with a fixed point are asked only where they stay
 * short (decimal.js, and Exact alike, would write out every digit of 1e9000000000000).
 */
function view(x: Num, magnitude: number): Record<string, string | boolean> {
  const v: Record<string, string | boolean> = {
    finite: x.isFinite(),
    zero: x.isZero(),
    neg: x.isNeg(),
    toString: x.toString(),
    valueOf: x.valueOf(),
    toNumber: numberText(x.toNumber()),
  };
  if (magnitude < 400) {
    v.fixed2 = x.toFixed(2);
    v.fixed6 = x.toFixed(6, ROUND_HALF_EVEN);
    v.fixed8 = x.toFixed(8);
    v.cut8 = x.toDecimalPlaces(8, ROUND_DOWN).toFixed();
  }
  if (magnitude < 400 && magnitude > -400) v.fixed = x.toFixed();
  return v;
}

/** The exponent of a decimal.js value's leading digit (0 for zero and non-finite values). */
const magnitudeOf = (r: Reference): number => (r.isFinite() && !r.isZero() ? r.e : 0);

function assertSame(mine: Num, ref: Reference, what: string): void {
  assert.ok(mine instanceof Exact, `${what}: not an Exact`);
  const m = magnitudeOf(ref);
  assert.deepEqual(view(mine, m), view(ref, m), what);
}

type Outcome<T> = { value: T } | { error: string };
function attempt<T>(f: () => T): Outcome<T> {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Reads v both ways: the same refusal, or the same value. */
function assertReadsSame(v: string | number): void {
  const mine = attempt(() => new Exact(v));
  const ref = attempt(() => new Reference(v));
  if ('error' in ref || 'error' in mine) {
    assert.deepEqual('error' in mine ? mine.error : 'accepted', 'error' in ref ? ref.error : 'accepted', `reading ${JSON.stringify(v)}`);
    return;
  }
  assertSame(mine.value, ref.value, `reading ${JSON.stringify(v)}`);
}

/** a op b both ways; the operand is given as text or number, or as a decimal already. */
function assertOpSame(a: string | number, op: Op, b: string | number, asDecimal: boolean): void {
  const mine = new Exact(a)[op](asDecimal ? new Exact(b) : b);
  const ref = new Reference(a)[op](asDecimal ? new Reference(b) : b);
  assertSame(mine, ref, `${JSON.stringify(a)} ${op} ${JSON.stringify(b)}`);
}

function assertOrderSame(a: string | number, b: string | number): void {
  const x = new Exact(a);
  const r = new Reference(a);
  const what = `${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  assert.ok(Object.is(x.cmp(b), r.cmp(b)), `${what}: cmp ${x.cmp(b)} vs ${r.cmp(b)}`);
  assert.deepEqual([x.eq(b), x.lt(b), x.lte(b), x.gt(b), x.gte(b)], [r.eq(b), r.lt(b), r.lte(b), r.gt(b), r.gte(b)], what);
}

// ---- properties ----------------------------------------------------------------------------

describe('Exact reads what decimal.js reads', () => {
  it('property: the same value or the same refusal, for decimal text, numbers and anything else', TIMEOUT, () => {
    fc.assert(fc.property(anything, assertReadsSame), { numRuns: runs(3000) });
  });
});

describe('Exact computes what decimal.js computes', () => {
  it('property: plus, minus, times, div and every comparison', TIMEOUT, () => {
    fc.assert(
      fc.property(operand, operand, fc.boolean(), (a, b, asDecimal) => {
        for (const op of OPS) assertOpSame(a, op, b, asDecimal);
        assertOrderSame(a, b);
      }),
      { numRuns: runs(3000) },
    );
  });

  it('property: neg, abs, and rounding to decimal places in every mode', TIMEOUT, () => {
    fc.assert(
      fc.property(operand, fc.integer({ min: 0, max: 12 }), (a, dp) => {
        const x = new Exact(a);
        const r = new Reference(a);
        assertSame(x.neg(), r.neg(), `neg ${JSON.stringify(a)}`);
        assertSame(x.abs(), r.abs(), `abs ${JSON.stringify(a)}`);
        if (magnitudeOf(r) >= 400) return;
        for (const rm of MODES) {
          const what = `${JSON.stringify(a)} to ${dp} places, mode ${rm}`;
          assert.equal(x.toFixed(dp, rm), r.toFixed(dp, rm), what);
          assertSame(x.toDecimalPlaces(dp, rm), r.toDecimalPlaces(dp, rm), what);
        }
      }),
      { numRuns: runs(3000) },
    );
  });

  it('property: exact ties at the 41st digit, in sums, products and quotients', TIMEOUT, () => {
    const sign = fc.constantFrom('', '-');
    const exp = fc.integer({ min: -60, max: 60 });
    // 41 significant digits ending in 5: + 0, × 1 and ÷ 1 round a tie; ÷ 2 of 41 odd digits from 1… leaves a 40-digit quotient and half a unit
    const fives = fc.tuple(sign, digitRun(40, 40), fc.constantFrom('', '0', '000'), exp).map(([s, d, z, e]) => `${s}${d}5${z}e${e}`);
    const odds = fc.tuple(sign, digitRun(39, 39), fc.constantFrom('1', '3', '5', '7', '9'), exp).map(([s, d, o, e]) => `${s}1${d}${o}e${e}`);
    const operation = fc.constantFrom<[Op, string]>(['plus', '0'], ['minus', '-0'], ['times', '1'], ['times', '-10'], ['div', '1'], ['div', '0.1'], ['div', '2'], ['div', '-2'], ['div', '0.2'], ['div', '2e-30'], ['div', '20']);
    fc.assert(
      fc.property(fc.oneof(fives, odds), operation, (a, [op, b]) => assertOpSame(a, op, b, false)),
      { numRuns: runs(2000) },
    );
  });

  it('property: chains of operations (each step compared)', TIMEOUT, () => {
    const step = fc.tuple(fc.constantFrom('plus', 'minus', 'times', 'div', 'neg', 'abs', 'cut', 'round'), fc.oneof(figure, operand));
    fc.assert(
      fc.property(fc.oneof(figure, operand), fc.array(step, { minLength: 1, maxLength: 25 }), (start, steps) => {
        let x = new Exact(start);
        let r = new Reference(start);
        const path = [JSON.stringify(start)];
        for (const [op, b] of steps) {
          if (op === 'neg' || op === 'abs') {
            x = x[op]();
            r = r[op]();
          } else if (op === 'cut' || op === 'round') {
            if (magnitudeOf(r) >= 400) continue;
            const [dp, rm]: [number, Rounding] = op === 'cut' ? [8, ROUND_DOWN] : [2, ROUND_HALF_EVEN];
            x = x.toDecimalPlaces(dp, rm);
            r = r.toDecimalPlaces(dp, rm);
          } else {
            x = x[op](b);
            r = r[op](b);
          }
          path.push(`${op} ${op === 'plus' || op === 'minus' || op === 'times' || op === 'div' ? JSON.stringify(b) : ''}`);
          assertSame(x, r, path.join(' '));
          assertOrderSame(x.valueOf(), b);
        }
      }),
      { numRuns: runs(1000) },
    );
  });

  it('property: bookkeeping as portfolio.ts does it (value × pct / 100 / price, cut to 8 places, marked daily)', TIMEOUT, () => {
    const price = figure.filter((t) => !t.startsWith('-') && Number(t) > 0);
    fc.assert(
      fc.property(fc.array(fc.tuple(price, fc.constantFrom('10', '25', '3.5', '100'), price), { minLength: 1, maxLength: 30 }), (days) => {
        let cash = [new Exact('100000'), new Reference('100000')] as const;
        let invested = [new Exact(0), new Reference(0)] as const;
        for (const [buyAt, pct, markAt] of days) {
          const qty = [
            cash[0].plus(invested[0]).times(pct).div(100).div(buyAt).toDecimalPlaces(8, ROUND_DOWN),
            cash[1].plus(invested[1]).times(pct).div(100).div(buyAt).toDecimalPlaces(8, ROUND_DOWN),
          ] as const;
          cash = [cash[0].minus(qty[0].times(buyAt)), cash[1].minus(qty[1].times(buyAt))];
          invested = [invested[0].plus(qty[0].times(markAt)), invested[1].plus(qty[1].times(markAt))];
          assertSame(qty[0], qty[1], 'quantity');
          assertSame(cash[0], cash[1], 'cash');
          assertSame(invested[0], invested[1], 'invested');
          assert.equal(cash[0].plus(invested[0]).toFixed(2), cash[1].plus(invested[1]).toFixed(2));
        }
      }),
      { numRuns: runs(300) },
    );
  });
});

describe('Exact: the cases named in perf_v1 and its brief, each checked against decimal.js', () => {
  const cases: Array<[string, () => Exact, () => Reference]> = [
    ['neg of 0', () => new Exact(0).neg(), () => new Reference(0).neg()],
    ['0 × −3', () => new Exact(0).times(-3), () => new Reference(0).times(-3)],
    ['−0 + −0', () => new Exact('-0').plus('-0'), () => new Reference('-0').plus('-0')],
    ['−0 − 0', () => new Exact('-0').minus(0), () => new Reference('-0').minus(0)],
    ['x − x', () => new Exact('1.5').minus('1.5'), () => new Reference('1.5').minus('1.5')],
    ['−x + x', () => new Exact('-1.5').plus('1.5'), () => new Reference('-1.5').plus('1.5')],
    ['0 ÷ −2', () => new Exact(0).div(-2), () => new Reference(0).div(-2)],
    ['1 ÷ 0', () => new Exact(1).div(0), () => new Reference(1).div(0)],
    ['−1 ÷ −0', () => new Exact(-1).div('-0'), () => new Reference(-1).div('-0')],
    ['0 ÷ 0', () => new Exact(0).div(0), () => new Reference(0).div(0)],
    ['1 ÷ 3', () => new Exact(1).div(3), () => new Reference(1).div(3)],
    ['2 ÷ 3', () => new Exact(2).div(3), () => new Reference(2).div(3)],
    ['a tie at the 41st digit, even', () => new Exact('1' + '0'.repeat(38) + '25').plus(0), () => new Reference('1' + '0'.repeat(38) + '25').plus(0)],
    ['a tie at the 41st digit, odd', () => new Exact('1' + '0'.repeat(38) + '35').times(1), () => new Reference('1' + '0'.repeat(38) + '35').times(1)],
    ['a tie in a quotient', () => new Exact('1' + '0'.repeat(38) + '25').div(1), () => new Reference('1' + '0'.repeat(38) + '25').div(1)],
    ['rounding up to a new digit', () => new Exact('9'.repeat(45)).plus(0), () => new Reference('9'.repeat(45)).plus(0)],
    ['1 − 1e−100', () => new Exact(1).minus('1e-100'), () => new Reference(1).minus('1e-100')],
    ['1e100 + 1e−100', () => new Exact('1e100').plus('1e-100'), () => new Reference('1e100').plus('1e-100')],
    ['a tiny negative cut to 8 places', () => new Exact('-0.000000001').toDecimalPlaces(8, ROUND_DOWN), () => new Reference('-0.000000001').toDecimalPlaces(8, ROUND_DOWN)],
    ['overflow', () => new Exact('5e4500000000000000').times('5e4500000000000000'), () => new Reference('5e4500000000000000').times('5e4500000000000000')],
    ['underflow', () => new Exact('-1e-4500000000000000').times('1e-4500000000000000'), () => new Reference('-1e-4500000000000000').times('1e-4500000000000000')],
    ['Infinity − Infinity', () => new Exact('Infinity').minus('Infinity'), () => new Reference('Infinity').minus('Infinity')],
    ['hex', () => new Exact('0x1.8p3'), () => new Reference('0x1.8p3')],
  ];
  for (const [name, mine, ref] of cases) {
    it(name, () => assertSame(mine(), ref(), name));
  }

  it('−0 prints as "0" with toFixed(), "-0" with valueOf(), and toNumber() gives −0 (decimal.js, not IEEE printing)', () => {
    for (const z of [new Exact('-0'), new Reference('-0')]) {
      assert.equal(z.toFixed(), '0');
      assert.equal(z.toFixed(2), '0.00');
      assert.equal(z.valueOf(), '-0');
      assert.ok(Object.is(z.toNumber(), -0));
    }
    assert.equal(new Exact('-0.001').toFixed(2), '-0.00');
    assert.equal(new Exact('-0.001').toDecimalPlaces(2, ROUND_DOWN).toFixed(2), '0.00');
  });

  it('refuses what decimal.js refuses, with its message', () => {
    for (const bad of ['', ' 1', '1e', '--1', 'abc', '1.2.3']) assertReadsSame(bad);
    assert.throws(() => new Exact('abc'), /\[DecimalError\] Invalid argument: abc/);
    assert.throws(() => new Exact(1).toFixed(-1), /\[DecimalError\] Invalid argument: -1/);
  });
});
