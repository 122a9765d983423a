// Tooling self-test (test/tooling/, reported apart from the product tests): the benchmark reports' median and its distribution-free interval.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { median, medianInterval } from '../../bench/stats.ts';

describe('bench stats', () => {
  it('median of odd and even counts, whatever the order', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('no 95% interval from fewer than 6 rounds; from 6, the extremes (coverage 1 - 2/64)', () => {
    assert.equal(medianInterval([1, 2, 3, 4, 5]), null);
    assert.deepEqual(medianInterval([6, 1, 5, 2, 4, 3]), { low: 1, high: 6, coverage: 1 - 2 / 64 });
  });

  it('24 rounds: the 7th smallest to the 7th largest (tabulated: P(B(24, 1/2) <= 6) = 0.01133)', () => {
    const rounds = Array.from({ length: 24 }, (_, i) => i + 1).reverse();
    const interval = medianInterval(rounds)!;
    assert.deepEqual([interval.low, interval.high], [7, 18]);
    assert.ok(Math.abs(interval.coverage - (1 - 2 * 0.011330)) < 1e-5, String(interval.coverage));
  });

  it('a lower confidence gives a narrower interval', () => {
    const rounds = Array.from({ length: 24 }, (_, i) => i + 1);
    const wide = medianInterval(rounds, 0.95)!;
    const narrow = medianInterval(rounds, 0.5)!;
    assert.ok(narrow.low > wide.low && narrow.high < wide.high);
    assert.ok(narrow.coverage >= 0.5);
  });
});
