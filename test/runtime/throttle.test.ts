// The log throttle of the background jobs (src/runtime/throttle.ts): a repeated message passes
// once per interval, a different one at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { throttled } from '../../src/runtime/throttle.ts';

function harness(everyMs?: number) {
  const written: string[] = [];
  const clock = { ms: 1_000_000 };
  const write = throttled((m) => written.push(m), everyMs, () => clock.ms);
  return { written, clock, write };
}

test('the same message passes once a minute by default', () => {
  const { written, clock, write } = harness();
  write('down');
  write('down');
  clock.ms += 59_999;
  write('down');
  assert.deepEqual(written, ['down']);
  clock.ms += 1;
  write('down');
  assert.deepEqual(written, ['down', 'down']);
});

test('a different message passes at once, and the interval starts again from it', () => {
  const { written, clock, write } = harness(1_000);
  write('a');
  write('b');
  write('a');
  clock.ms += 500;
  write('a');
  assert.deepEqual(written, ['a', 'b', 'a']);
  clock.ms += 500;
  write('a');
  assert.deepEqual(written, ['a', 'b', 'a', 'a']);
});

test('an empty first message is written', () => {
  const { written, write } = harness();
  write('');
  assert.deepEqual(written, ['']);
});
