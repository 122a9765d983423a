// The days whose corporate actions the service knew (src/method/perf/known.ts): a request widens
// what was known when the two touch, a gap replaces it; what a period lacks is named by its days.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeMissing, missingPart, widen } from '../../src/method/perf/known.ts';

test('widen: the union of ranges that overlap or touch; a range apart replaces what was known', () => {
  assert.deepEqual(widen(null, { from: '2026-03-02', through: '2026-03-05' }), { from: '2026-03-02', through: '2026-03-05' });
  assert.deepEqual(widen({ from: '2026-03-02', through: '2026-03-05' }, { from: '2026-03-06', through: '2026-03-09' }), { from: '2026-03-02', through: '2026-03-09' }, 'the next day touches');
  assert.deepEqual(widen({ from: '2026-03-02', through: '2026-03-05' }, { from: '2026-01-01', through: '2026-03-03' }), { from: '2026-01-01', through: '2026-03-05' });
  assert.deepEqual(widen({ from: '2026-03-02', through: '2026-03-05' }, { from: '2026-03-07', through: '2026-03-09' }), { from: '2026-03-07', through: '2026-03-09' }, 'a day apart: no union');
});

test('missingPart: null when the period is covered, the symbol a crypto pair or the period empty; else what was known', () => {
  const known = { SPY: { from: '2026-01-02', through: '2026-03-01' } };
  assert.equal(missingPart(known, 'SPY', '2026-01-02', '2026-03-01'), null);
  assert.equal(missingPart(known, 'BTC/USD', '2026-01-02', '2026-03-01'), null, 'crypto pairs have no corporate actions');
  assert.equal(missingPart(known, 'NVDA', '2026-03-02', '2026-03-01'), null, 'an empty period lacks nothing');
  assert.deepEqual(missingPart(known, 'SPY', '2026-01-02', '2026-03-20'), { symbol: 'SPY', known: known.SPY, from: '2026-01-02', through: '2026-03-20' });
  assert.deepEqual(missingPart(known, 'NVDA', '2026-01-02', '2026-03-20'), { symbol: 'NVDA', known: null, from: '2026-01-02', through: '2026-03-20' });
});

test('describeMissing names the days missing', () => {
  const m = (known: { from: string; through: string } | null) => describeMissing({ symbol: 'SPY', known, from: '2026-01-02', through: '2026-03-20' });
  assert.equal(m(null), 'SPY: none known for 2026-01-02 to 2026-03-20 (never fetched from the provider)');
  assert.equal(m({ from: '2026-01-02', through: '2026-03-01' }), 'SPY: unknown for 2026-03-02 to 2026-03-20');
  assert.equal(m({ from: '2026-02-01', through: '2026-03-01' }), 'SPY: unknown for 2026-01-02 to 2026-01-31 and 2026-03-02 to 2026-03-20');
  assert.equal(m({ from: '2026-03-21', through: '2026-04-01' }), 'SPY: none known for 2026-01-02 to 2026-03-20 (known for 2026-03-21 to 2026-04-01 only)');
});
