// LEDGER_BENCHMARK: SPY by default, any stock or crypto symbol, and one line naming it when bad.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('LEDGER_BENCHMARK defaults to SPY and takes a stock or a crypto pair', () => {
  assert.equal(loadConfig({}).performance.benchmark, 'SPY');
  assert.equal(loadConfig({ LEDGER_BENCHMARK: '' }).performance.benchmark, 'SPY');
  assert.equal(loadConfig({ LEDGER_BENCHMARK: 'QQQ' }).performance.benchmark, 'QQQ');
  assert.equal(loadConfig({ LEDGER_BENCHMARK: 'BTC/USD' }).performance.benchmark, 'BTC/USD');
});

test('a bad LEDGER_BENCHMARK stops the start with one line naming it', () => {
  for (const bad of ['spy', 'S P Y', 'BTC/', 'A'.repeat(21)]) {
    assert.throws(() => loadConfig({ LEDGER_BENCHMARK: bad }), (err: unknown) => err instanceof ConfigError && /^LEDGER_BENCHMARK /.test(err.message) && !err.message.includes('\n'), bad);
  }
});
