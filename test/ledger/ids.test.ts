// Link tokens, request ids and the pooled randomness behind them (src/ledger/ids.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkToken, pooledRandomBytes, requestId } from '../../src/ledger/ids.ts';

test('a link token is 27 characters safe in a client_order_id, and sorts by the time it was made', () => {
  const t0 = Date.UTC(2026, 10, 22, 12, 0, 0, 0);
  const tokens = Array.from({ length: 200 }, (_, i) => linkToken(t0 + i * 7));
  for (const token of tokens) assert.match(token, /^lt_[0-9a-z]{24}$/);
  assert.deepEqual([...tokens].sort(), tokens);
  assert.ok(linkToken(t0 + 1) > linkToken(t0), 'one millisecond later sorts later whatever the random part');
});

test('link tokens made in one millisecond differ (70 random bits each)', () => {
  const tokens = new Set(Array.from({ length: 20_000 }, () => linkToken(1_700_000_000_000)));
  assert.equal(tokens.size, 20_000);
});

test('pooled random bytes are handed out once, across pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 3000; i++) {
    const bytes = pooledRandomBytes(12);
    assert.equal(bytes.length, 12);
    seen.add(Buffer.from(bytes).toString('hex'));
  }
  assert.equal(seen.size, 3000, '36,000 bytes from a 4,096-byte pool, never repeated');
  assert.match(requestId(), /^req_[0-9a-f]{24}$/);
});
