// Decimals: the spec's examples, the 64-character bound, cheap refusal, exact comparison,
// and properties against a BigInt reference.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DECIMAL_PATTERN, MAX_DECIMAL_LENGTH, compareDecimal, isNormalisedDecimal, normaliseDecimal } from '../../src/core/index.ts';

const norm = (t: string): string => {
  const r = normaliseDecimal(t);
  if (!r.ok) assert.fail(`${t}: ${r.reason}`);
  return r.value;
};
const reason = (t: string): string => {
  const r = normaliseDecimal(t);
  if (r.ok) assert.fail(`${t} accepted as ${r.value}`);
  return r.reason;
};

describe('normaliseDecimal', () => {
  it('canon_v1 §2 examples', () => {
    assert.equal(norm('1.50'), '1.5');
    assert.equal(norm('1e3'), '1000');
    assert.equal(norm('0.000'), '0');
    assert.equal(norm('-2.5E-3'), '-0.0025');
    assert.equal(reason('007'), 'grammar');
    assert.equal(norm('-0'), '0');
    assert.equal(norm('-0.0'), '0');
    assert.equal(norm('0.1'), norm('1e-1'));
  });
  it('DECIMAL_PATTERN is the grammar', () => {
    const re = new RegExp(DECIMAL_PATTERN);
    for (const t of ['0', '-0', '1.5', '1e3', '1E+3', '1e-3', '10.01e05']) assert.ok(re.test(t), t);
    for (const t of ['007', '1.', '.5', '+1', '1e', '', ' 1', '1 ', 'NaN']) {
      assert.ok(!re.test(t), t);
      assert.equal(reason(t), 'grammar');
    }
  });
  it('the bound is on the normalised length, sign included', () => {
    assert.equal(MAX_DECIMAL_LENGTH, 64);
    assert.equal(norm('1e63').length, 64);
    assert.equal(reason('1e64'), 'too_long');
    assert.equal(norm('-1e62').length, 64);
    assert.equal(reason('-1e63'), 'too_long');
    assert.equal(norm('1e-62').length, 64);
    assert.equal(reason('1e-63'), 'too_long');
    assert.equal(norm('1.' + '0'.repeat(10_000)), '1');
    assert.equal(norm('1' + '0'.repeat(10_000) + 'e-10000'), '1');
  });
  it('refuses astronomically long results without allocating them', () => {
    const t0 = performance.now();
    for (const t of ['1e999999999', '1e-999999999', '-1e999999999', '1e' + '9'.repeat(100_000), '1e-' + '9'.repeat(100_000), '1e9007199254740993']) {
      assert.equal(reason(t), 'too_long');
    }
    assert.ok(performance.now() - t0 < 200);
  });
  it('zero with any exponent is 0', () => {
    assert.equal(norm('0e999999999'), '0');
    assert.equal(norm('-0.000e-' + '9'.repeat(1000)), '0');
  });
  it('property: matches a BigInt reference and is idempotent', () => {
    fc.assert(
      fc.property(decimalText(), (t) => {
        const r = normaliseDecimal(t);
        const ref = reference(t);
        if (ref.length > MAX_DECIMAL_LENGTH) assert.deepEqual(r, { ok: false, reason: 'too_long' });
        else {
          assert.deepEqual(r, { ok: true, value: ref });
          assert.ok(isNormalisedDecimal(ref));
          assert.deepEqual(normaliseDecimal(ref), { ok: true, value: ref });
        }
      }),
      { numRuns: 3000 },
    );
  });
  it('property: agrees with Number for short values', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 6 }), (n, scale) => {
        const text = (n / 10 ** scale).toFixed(scale);
        assert.equal(Number(norm(text)), Number(text));
      }),
    );
  });
});

describe('compareDecimal', () => {
  it('orders exactly', () => {
    const ordered = ['-100', '-10.5', '-10', '-1', '-0.5', '-0.25', '-0.0000001', '0', '0.0000001', '0.1', '0.25', '0.5', '1', '1.000000000000000000000001', '9', '10', '100'];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        assert.equal(compareDecimal(ordered[i]!, ordered[j]!), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
      }
    }
  });
  it('beyond float precision', () => {
    assert.equal(compareDecimal('9007199254740993', '9007199254740992'), 1);
    assert.equal(compareDecimal('0.10000000000000000001', '0.1'), 1);
    assert.equal(compareDecimal('100', '100.00000000000000000001'), -1);
  });
  it('refuses non-normalised input', () => {
    for (const bad of ['1.50', '-0', '1e3', '007', '', ' 1', '.5', '1.']) {
      assert.throws(() => compareDecimal(bad, '1'), TypeError);
      assert.throws(() => compareDecimal('1', bad), TypeError);
    }
  });
  it('property: matches a BigInt reference', () => {
    fc.assert(
      fc.property(decimalText(20), decimalText(20), (a, b) => {
        const na = reference(a);
        const nb = reference(b);
        if (na.length > 64 || nb.length > 64) return;
        assert.equal(compareDecimal(na, nb), referenceCompare(na, nb));
      }),
      { numRuns: 3000 },
    );
  });
});

// --- reference implementation on BigInt ---------------------------------------------------

function decimalText(maxExp = 80): fc.Arbitrary<string> {
  const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
  return fc
    .tuple(
      fc.boolean(),
      fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, 30)).map(([a, b]) => a + b)),
      fc.option(digits(1, 30), { nil: undefined }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: maxExp }), fc.integer({ min: 0, max: 2 })), { nil: undefined }),
    )
    .map(([neg, int, frac, exp]) => {
      let t = (neg ? '-' : '') + int;
      if (frac !== undefined) t += '.' + frac;
      if (exp) t += exp[0] + exp[1] + '0'.repeat(exp[3]) + String(exp[2]);
      return t;
    });
}

function reference(t: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t)!;
  let mant = BigInt(m[2]! + (m[3] ?? ''));
  let e = Number(m[4] ?? '0') - (m[3]?.length ?? 0);
  if (mant === 0n) return '0';
  while (mant % 10n === 0n) {
    mant /= 10n;
    e++;
  }
  let s = mant.toString();
  if (e >= 0) s += '0'.repeat(e);
  else if (-e < s.length) s = s.slice(0, s.length + e) + '.' + s.slice(s.length + e);
  else s = '0.' + '0'.repeat(-e - s.length) + s;
  return (m[1] ? '-' : '') + s;
}

function referenceCompare(a: string, b: string): number {
  const scale = 80;
  const toBig = (s: string): bigint => {
    const neg = s.startsWith('-');
    const [i, f = ''] = (neg ? s.slice(1) : s).split('.');
    const v = BigInt(i! + f.padEnd(scale, '0'));
    return neg ? -v : v;
  };
  const x = toBig(a);
  const y = toBig(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
