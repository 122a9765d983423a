// Every field rule of interface 2.2 on POST /v1/decisions: types, enums, length bounds, decimal
// grammar and ranges, defaults, occurred_at window, unknown properties, lone surrogates, duplicate
// keys, non-object bodies. Each refusal is a 400 invalid_request naming the field and records nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { assertError, headOf, validDecision } from './record-helpers.ts';

const NOW = Date.parse('2025-06-15T12:00:00.000Z');
const fixedClock = { now: () => new Date(NOW) };
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A body as raw JSON text, so number text reaches the service exactly as written. */
const raw = (fields: string) => `{"symbol":"AAPL","action":"BUY",${fields}}`;

type Refusal = { name: string; body: unknown; param: string };
type Acceptance = { name: string; body: unknown; content: Record<string, unknown> };

const refusals: Refusal[] = [
  // types and required fields
  { name: 'symbol missing', body: { action: 'BUY' }, param: 'symbol' },
  { name: 'action missing', body: { symbol: 'AAPL' }, param: 'action' },
  { name: 'symbol a number', body: validDecision({ symbol: 123 }), param: 'symbol' },
  { name: 'symbol null', body: validDecision({ symbol: null }), param: 'symbol' },
  { name: 'symbol empty', body: validDecision({ symbol: '' }), param: 'symbol' },
  { name: 'symbol 21 characters', body: validDecision({ symbol: 'S'.repeat(21) }), param: 'symbol' },
  { name: 'symbol 21 astral code points', body: validDecision({ symbol: '𝔸'.repeat(21) }), param: 'symbol' },
  { name: 'action lower case', body: validDecision({ action: 'buy' }), param: 'action' },
  { name: 'action unknown', body: validDecision({ action: 'SHORT' }), param: 'action' },
  { name: 'action an array', body: validDecision({ action: ['BUY'] }), param: 'action' },
  { name: 'asset_class unknown', body: validDecision({ asset_class: 'STOCK' }), param: 'asset_class' },
  { name: 'asset_class null', body: validDecision({ asset_class: null }), param: 'asset_class' },
  { name: 'currency 2 characters', body: validDecision({ currency: 'US' }), param: 'currency' },
  { name: 'currency 4 characters', body: validDecision({ currency: 'USDT' }), param: 'currency' },
  { name: 'currency a number', body: validDecision({ currency: 840 }), param: 'currency' },
  { name: 'time_horizon 121 characters', body: validDecision({ time_horizon: 'h'.repeat(121) }), param: 'time_horizon' },
  { name: 'time_horizon a number', body: validDecision({ time_horizon: 30 }), param: 'time_horizon' },
  // control characters: never part of a horizon (nor of a symbol or a currency code)
  ...[['TAB', '5\ttd'], ['CR', '5 td\r'], ['LF', '\n5 td'], ['NUL', '5\u0000td'], ['DEL', '5 td\u007f'], ['ESC', '\u001b[31m5 td']].map(([what, time_horizon]) => (
    { name: `time_horizon holding ${what}`, body: validDecision({ time_horizon }), param: 'time_horizon' })),
  { name: 'currency holding TAB', body: validDecision({ currency: 'US\t' }), param: 'currency' },
  { name: 'thesis 8001 characters', body: validDecision({ thesis: 't'.repeat(8001) }), param: 'thesis' },
  { name: 'thesis an object', body: validDecision({ thesis: { why: 'x' } }), param: 'thesis' },
  { name: 'metadata an array', body: validDecision({ metadata: [1] }), param: 'metadata' },
  { name: 'metadata a string', body: validDecision({ metadata: 'x' }), param: 'metadata' },
  { name: 'metadata null', body: validDecision({ metadata: null }), param: 'metadata' },
  { name: 'occurred_at a number', body: validDecision({ occurred_at: 1718452800 }), param: 'occurred_at' },
  // decimal ranges, as numbers and as strings
  { name: 'target_allocation_pct 100.0000001', body: raw('"target_allocation_pct":100.0000001'), param: 'target_allocation_pct' },
  { name: 'target_allocation_pct "100.0000001"', body: validDecision({ target_allocation_pct: '100.0000001' }), param: 'target_allocation_pct' },
  { name: 'target_allocation_pct 1.000001e2', body: raw('"target_allocation_pct":1.000001e2'), param: 'target_allocation_pct' },
  { name: 'target_allocation_pct -0.0001', body: raw('"target_allocation_pct":-0.0001'), param: 'target_allocation_pct' },
  { name: 'target_allocation_pct "-1e-30"', body: validDecision({ target_allocation_pct: '-1e-30' }), param: 'target_allocation_pct' },
  { name: 'confidence 1.0000000000000000000001', body: raw('"confidence":1.0000000000000000000001'), param: 'confidence' },
  { name: 'confidence "1.0000000000000000000001"', body: validDecision({ confidence: '1.0000000000000000000001' }), param: 'confidence' },
  { name: 'confidence 2', body: raw('"confidence":2'), param: 'confidence' },
  { name: 'confidence -1e-30', body: raw('"confidence":-1e-30'), param: 'confidence' },
  // decimal grammar
  { name: 'quantity "007"', body: validDecision({ quantity: '007' }), param: 'quantity' },
  { name: 'quantity "1."', body: validDecision({ quantity: '1.' }), param: 'quantity' },
  { name: 'quantity ".5"', body: validDecision({ quantity: '.5' }), param: 'quantity' },
  { name: 'quantity "+1"', body: validDecision({ quantity: '+1' }), param: 'quantity' },
  { name: 'quantity " 1"', body: validDecision({ quantity: ' 1' }), param: 'quantity' },
  { name: 'quantity "0x10"', body: validDecision({ quantity: '0x10' }), param: 'quantity' },
  { name: 'quantity "NaN"', body: validDecision({ quantity: 'NaN' }), param: 'quantity' },
  { name: 'quantity "Infinity"', body: validDecision({ quantity: 'Infinity' }), param: 'quantity' },
  { name: 'quantity ""', body: validDecision({ quantity: '' }), param: 'quantity' },
  { name: 'quantity "1e"', body: validDecision({ quantity: '1e' }), param: 'quantity' },
  { name: 'quantity true', body: validDecision({ quantity: true }), param: 'quantity' },
  { name: 'quantity null', body: validDecision({ quantity: null }), param: 'quantity' },
  { name: 'quantity an object', body: validDecision({ quantity: { value: 1 } }), param: 'quantity' },
  { name: 'notional an array', body: validDecision({ notional: [1] }), param: 'notional' },
  // the 64-character bound on the normalised form
  { name: 'quantity with a 65-character normalised form (string)', body: validDecision({ quantity: '1' + '0'.repeat(64) }), param: 'quantity' },
  { name: 'quantity 1e64 (number, 65 characters normalised)', body: raw('"quantity":1e64'), param: 'quantity' },
  { name: 'notional negative, 65 characters normalised', body: validDecision({ notional: '-' + '9'.repeat(64) }), param: 'notional' },
  { name: 'quantity 0.000…1 with 65 characters', body: validDecision({ quantity: '1e-63' }), param: 'quantity' },
  { name: 'metadata number with a 65-character normalised form at depth', body: raw('"metadata":{"a":{"b":[1,{"c":1e64}]}}'), param: 'metadata.a.b.1.c' },
  // occurred_at
  { name: 'occurred_at one millisecond in the future', body: validDecision({ occurred_at: iso(NOW + 1) }), param: 'occurred_at' },
  { name: 'occurred_at now plus a tenth of a millisecond', body: validDecision({ occurred_at: '2025-06-15T12:00:00.0001Z' }), param: 'occurred_at' },
  { name: 'occurred_at in the future by an offset', body: validDecision({ occurred_at: '2025-06-15T13:00:01+01:00' }), param: 'occurred_at' },
  { name: 'occurred_at seven days and one second old', body: validDecision({ occurred_at: iso(NOW - 7 * DAY - 1000) }), param: 'occurred_at' },
  { name: 'occurred_at without an offset', body: validDecision({ occurred_at: '2025-06-15T10:00:00' }), param: 'occurred_at' },
  { name: 'occurred_at a date only', body: validDecision({ occurred_at: '2025-06-15' }), param: 'occurred_at' },
  { name: 'occurred_at an impossible date', body: validDecision({ occurred_at: '2025-02-30T10:00:00Z' }), param: 'occurred_at' },
  { name: 'occurred_at hour 24', body: validDecision({ occurred_at: '2025-06-14T24:00:00Z' }), param: 'occurred_at' },
  { name: 'occurred_at free text', body: validDecision({ occurred_at: 'yesterday' }), param: 'occurred_at' },
  // unknown properties, never stripped
  { name: 'an unknown top-level property', body: validDecision({ price: '10' }), param: 'price' },
  { name: 'a top-level nonce', body: validDecision({ nonce: 'n-1' }), param: 'nonce' },
  { name: 'an unknown property inside signature', body: validDecision({ signature: { key_id: 'aid_abc', nonce: 'n1', signature: 'AAAA', extra: 1 } }), param: 'signature.extra' },
  { name: 'signature missing its nonce', body: validDecision({ signature: { key_id: 'aid_abc', signature: 'AAAA' } }), param: 'signature.nonce' },
  { name: 'signature not an object', body: validDecision({ signature: 'sig' }), param: 'signature' },
  { name: 'a top-level __proto__ key', body: raw('"__proto__":{"admin":true}'), param: '__proto__' },
  { name: 'thesis of 8001 astral code points', body: validDecision({ thesis: '😀'.repeat(8001) }), param: 'thesis' },
  // lone surrogates (escaped)
  { name: 'symbol with an escaped lone surrogate', body: '{"symbol":"A\\ud800","action":"BUY"}', param: 'symbol' },
  { name: 'thesis with an escaped lone low surrogate', body: raw('"thesis":"x\\udc00y"'), param: 'thesis' },
  { name: 'metadata value with an escaped lone surrogate', body: raw('"metadata":{"note":"\\ud800"}'), param: 'metadata.note' },
  { name: 'metadata key with an escaped lone surrogate', body: raw('"metadata":{"a":{"k\\udbff":1}}'), param: 'metadata.a.k\uFFFD' },
  // duplicate keys
  { name: 'a duplicate top-level key', body: '{"symbol":"AAPL","action":"BUY","symbol":"MSFT"}', param: 'symbol' },
  { name: 'a duplicate key in metadata', body: raw('"metadata":{"a":{"x":1,"x":2}}'), param: 'metadata.a.x' },
  // non-object bodies
  { name: 'an array body', body: '[{"symbol":"AAPL","action":"BUY"}]', param: 'body' },
  { name: 'a string body', body: '"AAPL"', param: 'body' },
  { name: 'a number body', body: '42', param: 'body' },
  { name: 'a null body', body: 'null', param: 'body' },
  { name: 'a boolean body', body: 'true', param: 'body' },
  { name: 'an empty body', body: '', param: 'body' },
];

const acceptances: Acceptance[] = [
  { name: 'the minimum, with defaults applied', body: validDecision(), content: { asset_class: 'US_EQUITY', currency: 'USD', symbol: 'AAPL', action: 'BUY' } },
  { name: 'symbol of 20 characters', body: validDecision({ symbol: 'S'.repeat(20) }), content: { symbol: 'S'.repeat(20) } },
  { name: 'symbol of 20 astral code points', body: validDecision({ symbol: '𝔸'.repeat(20) }), content: { symbol: '𝔸'.repeat(20) } },
  ...['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'].map((action) => ({ name: `action ${action}`, body: validDecision({ action }), content: { action } })),
  ...['US_EQUITY', 'CRYPTO', 'ETF', 'PREDICTION_MARKET', 'PERPETUAL', 'OTHER'].map((asset_class) => ({ name: `asset_class ${asset_class}`, body: validDecision({ asset_class }), content: { asset_class } })),
  { name: 'currency EUR', body: validDecision({ currency: 'EUR' }), content: { currency: 'EUR' } },
  { name: 'time_horizon of 120 characters', body: validDecision({ time_horizon: 'h'.repeat(120) }), content: { time_horizon: 'h'.repeat(120) } },
  { name: 'time_horizon with spaces, punctuation and non-ASCII, as sent', body: validDecision({ time_horizon: ' 3 months (≈63 td) ⏳ ' }), content: { time_horizon: ' 3 months (≈63 td) ⏳ ' } },
  { name: 'thesis of 8000 characters', body: validDecision({ thesis: 't'.repeat(8000) }), content: { thesis: 't'.repeat(8000) } },
  { name: 'confidence 1', body: raw('"confidence":1'), content: { confidence: '1' } },
  { name: 'confidence "1.0"', body: validDecision({ confidence: '1.0' }), content: { confidence: '1' } },
  { name: 'confidence 1.0000000000000000000000 (number)', body: raw('"confidence":1.0000000000000000000000'), content: { confidence: '1' } },
  { name: 'confidence 0 and -0', body: raw('"confidence":-0'), content: { confidence: '0' } },
  { name: 'confidence 0.25', body: raw('"confidence":0.25'), content: { confidence: '0.25' } },
  { name: 'target_allocation_pct 100', body: raw('"target_allocation_pct":100'), content: { target_allocation_pct: '100' } },
  { name: 'target_allocation_pct "100.000"', body: validDecision({ target_allocation_pct: '100.000' }), content: { target_allocation_pct: '100' } },
  { name: 'target_allocation_pct 1e2', body: raw('"target_allocation_pct":1e2'), content: { target_allocation_pct: '100' } },
  { name: 'target_allocation_pct 0', body: raw('"target_allocation_pct":0'), content: { target_allocation_pct: '0' } },
  { name: 'quantity "1e5"', body: validDecision({ quantity: '1e5' }), content: { quantity: '100000' } },
  { name: 'quantity 1.50 (number text kept exactly)', body: raw('"quantity":1.50'), content: { quantity: '1.5' } },
  { name: 'quantity 0.1 as a number never becomes a float', body: raw('"quantity":0.1'), content: { quantity: '0.1' } },
  { name: 'quantity 12345678901234567890.123456789 (beyond float precision)', body: raw('"quantity":12345678901234567890.123456789'), content: { quantity: '12345678901234567890.123456789' } },
  { name: 'quantity with a 64-character normalised form', body: validDecision({ quantity: '1' + '0'.repeat(63) }), content: { quantity: '1' + '0'.repeat(63) } },
  { name: 'quantity 1e63 as a number', body: raw('"quantity":1e63'), content: { quantity: '1' + '0'.repeat(63) } },
  { name: 'notional negative with 64 characters', body: validDecision({ notional: '-' + '9'.repeat(63) }), content: { notional: '-' + '9'.repeat(63) } },
  { name: 'quantity 1e-62 (64 characters)', body: validDecision({ quantity: '1e-62' }), content: { quantity: '0.' + '0'.repeat(61) + '1' } },
  { name: 'quantity "-1.5E+3"', body: validDecision({ quantity: '-1.5E+3' }), content: { quantity: '-1500' } },
  {
    name: 'metadata numbers normalised at depth',
    body: raw('"metadata":{"a":{"b":[1.50,{"c":1e2,"d":-0.0}]},"n":null,"t":true,"s":"1.50"}'),
    content: { metadata: { a: { b: ['1.5', { c: '100', d: '0' }] }, n: null, t: true, s: '1.50' } },
  },
  { name: 'thesis of 8000 astral code points', body: validDecision({ thesis: '😀'.repeat(8000) }), content: { thesis: '😀'.repeat(8000) } },
  { name: 'a metadata key named __proto__ stays data', body: raw('"metadata":{"__proto__":{"x":1},"constructor":"c"}'), content: { metadata: JSON.parse('{"__proto__":{"x":"1"},"constructor":"c"}') } },
  { name: 'occurred_at now', body: validDecision({ occurred_at: iso(NOW) }), content: { occurred_at: iso(NOW) } },
  { name: 'occurred_at exactly seven days old', body: validDecision({ occurred_at: iso(NOW - 7 * DAY) }), content: { occurred_at: iso(NOW - 7 * DAY) } },
  { name: 'occurred_at now with extra zero digits', body: validDecision({ occurred_at: '2025-06-15T12:00:00.000000Z' }), content: { occurred_at: '2025-06-15T12:00:00.000000Z' } },
  { name: 'occurred_at with a -05:30 offset, seven days old', body: validDecision({ occurred_at: '2025-06-08T06:30:00-05:30' }), content: { occurred_at: '2025-06-08T06:30:00-05:30' } },
  { name: 'occurred_at with a +02:00 offset', body: validDecision({ occurred_at: '2025-06-15T13:30:00+02:00' }), content: { occurred_at: '2025-06-15T13:30:00+02:00' } },
  { name: 'a well-formed astral character (surrogate pair escapes)', body: raw('"thesis":"\\ud83d\\ude00"'), content: { thesis: '😀' } },
];

await forEachStore('decision field rules', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let agent: Awaited<ReturnType<TestApp['agent']>>;

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { clock: fixedClock, env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
    agent = await t.agent();
  });
  after(() => closeTestApp(t, kind));

  for (const c of refusals) {
    test(`refuses ${c.name} (param ${c.param})`, async () => {
      const head = await headOf(store, agent.agentId);
      const res = await postDecision(t, agent.secret, c.body);
      const e = assertError(res, 400, 'invalid_request', c.param);
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(await headOf(store, agent.agentId), head, 'a refused decision records nothing');
    });
  }

  for (const c of acceptances) {
    test(`accepts ${c.name}`, async () => {
      const res = await postDecision(t, agent.secret, c.body);
      assert.equal(res.statusCode, 201, res.body);
      const record = await store.findRecord(res.json().id);
      assert.ok(record, 'the record is stored');
      const content = JSON.parse(record.content) as Record<string, unknown>;
      for (const [k, v] of Object.entries(c.content)) assert.deepEqual(content[k], v, `content.${k}`);
      assert.equal(content.canon, 'canon_v1');
      assert.equal(content.type, 'decision');
      assert.equal(content.agent, agent.handle);
      assert.ok(content.asset_class, 'asset_class present (default applied)');
      assert.ok(content.currency, 'currency present (default applied)');
    });
  }

  test('refuses raw (invalid UTF-8) surrogate bytes in the body', async () => {
    const head = await headOf(store, agent.agentId);
    const bytes = Buffer.concat([Buffer.from('{"symbol":"A'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","action":"BUY"}')]);
    const res = await t.app.inject({
      method: 'POST', url: '/v1/decisions', payload: bytes,
      headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json', 'idempotency-key': `raw-surrogate-${kind.name}` },
    });
    assertError(res, 400, 'invalid_request');
    assert.equal(await headOf(store, agent.agentId), head);
  });

  test('refuses 1e999999999 quickly, as a number and as a string', async () => {
    for (const body of [raw('"quantity":1e999999999'), validDecision({ notional: '1e999999999' }), raw('"metadata":{"x":[1e999999999999999999]}')]) {
      const head = await headOf(store, agent.agentId);
      const started = performance.now();
      const res = await postDecision(t, agent.secret, body);
      const elapsed = performance.now() - started;
      assertError(res, 400, 'invalid_request');
      assert.ok(elapsed < 500, `refused in ${elapsed.toFixed(0)} ms`);
      assert.equal(await headOf(store, agent.agentId), head);
    }
  });

  test('the same decimal written differently hashes the same content', async () => {
    const a = await postDecision(t, agent.secret, raw('"quantity":1.50,"confidence":0.5'));
    const b = await postDecision(t, agent.secret, validDecision({ quantity: '15e-1', confidence: '0.500' }));
    assert.equal(a.statusCode, 201);
    assert.equal(b.statusCode, 201);
    assert.equal(a.json().verification.content_hash, b.json().verification.content_hash);
  });
});
