// Tooling self-test (test/tooling/, reported apart from the product tests): the property test's sizes: CI's defaults, and the nightly mode's LEDGER_PROPERTY_RUNS bodies per store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RUNS, ENGINE_DEFAULT_RUNS, engineRuns, nightly, propertyRuns } from '../property/runs.ts';

test('without LEDGER_PROPERTY_RUNS, CI keeps its sizes', () => {
  assert.deepEqual(propertyRuns('sqlite', {}), DEFAULT_RUNS.sqlite);
  assert.deepEqual(propertyRuns('postgres', { LEDGER_PROPERTY_RUNS: '' }), DEFAULT_RUNS.postgres);
  assert.equal(nightly({}), false);
});

test('LEDGER_PROPERTY_RUNS=100000 sends 100,000 bodies to each store', () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    const runs = propertyRuns(store, { LEDGER_PROPERTY_RUNS: '100000' });
    assert.equal(runs.mutated + runs.anything, 100_000);
    assert.ok(runs.mutated > 0 && runs.anything > 0);
  }
  assert.equal(nightly({ LEDGER_PROPERTY_RUNS: '100000' }), true);
});

test('a bad LEDGER_PROPERTY_RUNS stops the run with one clear line', () => {
  for (const bad of ['1', 'lots', '1e5', '-3', '100000.5']) {
    assert.throws(() => propertyRuns('sqlite', { LEDGER_PROPERTY_RUNS: bad }), /LEDGER_PROPERTY_RUNS must be a whole number/);
  }
});

test('the engine properties try ENGINE_DEFAULT_RUNS worlds, or LEDGER_PROPERTY_RUNS', () => {
  assert.equal(engineRuns({}), ENGINE_DEFAULT_RUNS);
  assert.equal(engineRuns({ LEDGER_PROPERTY_RUNS: '5000' }), 5000);
  assert.throws(() => engineRuns({ LEDGER_PROPERTY_RUNS: 'lots' }), /LEDGER_PROPERTY_RUNS must be a whole number/);
});
