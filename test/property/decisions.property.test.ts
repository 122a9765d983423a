// Property: thousands of random and hostile requests to POST /v1/decisions (random JSON values,
// valid decisions with one field mutated, huge numbers, weird unicode, deep nesting, wrong types,
// raw bytes, random headers). Never a 5xx; every error is the 2.7 body; a 4xx never records
// anything; every 201 is chained and its hashes recompute from the stored record.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { chainHash } from '../../src/core/chain.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';
import { nightly, propertyRuns } from './runs.ts';

// CI's sizes, or LEDGER_PROPERTY_RUNS bodies per store (npm run test:nightly: 100,000), without a timeout.
const RUNS = { sqlite: propertyRuns('sqlite'), postgres: propertyRuns('postgres') };
const TIMEOUT = nightly() ? { timeout: Infinity } : {};

const ACTIONS = ['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'];
const ASSET_CLASSES = ['US_EQUITY', 'CRYPTO', 'ETF', 'PREDICTION_MARKET', 'PERPETUAL', 'OTHER'];
const FIELDS = ['symbol', 'action', 'asset_class', 'target_allocation_pct', 'quantity', 'notional', 'currency', 'confidence', 'time_horizon', 'thesis', 'metadata', 'occurred_at', 'signature'];
const DAY = 86_400_000;

// ---- arbitraries -------------------------------------------------------------------------

/** Number text, valid and not: huge, tiny, long, exponent edge cases, near-misses of the grammar. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.bigInt({ min: -(10n ** 90n), max: 10n ** 90n }).map(String),
  fc.tuple(fc.nat(99999), fc.integer({ min: -120, max: 120 })).map(([m, e]) => `${m}e${e}`),
  fc.tuple(fc.nat(9), fc.nat(60)).map(([d, zeros]) => `0.${'0'.repeat(zeros)}${d}`),
  fc.constantFrom('1e999999999', '-1e-999999999', '1e-999999999999999999999', '0.0000', '-0', '1E+2', '00', '1.', '.5', '+1', 'NaN',
    'Infinity', '-Infinity', '0x1F', '1_000', ' 1', '1 ', '١٢', '1e', '--1', '1.0000000000000000000001', '100.0000000000000000001'),
);

/** Strings with every kind of unicode: astral, combining, controls, RTL, lone surrogates. */
const weirdString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('\u0000', '\u202e', 'e\u0301', '😀'.repeat(21), '\ufeff', '\u2028', 'a'.repeat(121), 't'.repeat(8001), '__proto__', 'constructor'),
);

/** JSON text that is hostile where a value is expected. */
const hostileValueText = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  numberText,
  numberText.map((n) => JSON.stringify(n)),
  weirdString.map((s) => JSON.stringify(s)),
  fc.nat(200).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.nat(200).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  fc.constantFrom('"\\ud800"', '"x\\udfff"', '"\\udbff\\udbff"', '{"k\\ud800":1}', '{"a":1,"a":2}', 'null', 'true', 'false', '[]', '{}',
    '{"key_id":"aid_x","nonce":"n","signature":"AA"}', '{"writer":1e400}', '"2999-01-01T00:00:00Z"', '"2020-01-01T00:00:00Z"'),
);

const decimalValue = fc.oneof(
  fc.nat(1000).map((n) => n / 1000),
  fc.nat(100).map(String),
  fc.tuple(fc.nat(99), fc.nat(999)).map(([i, f]) => `${i}.${f}`),
);
const metadataValue = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));

/** A decision that is valid (most of the time), as a plain object. */
const decisionObject = fc.record({
  symbol: fc.oneof(fc.constantFrom('AAPL', 'BTC/USD', 'SPY'), fc.string({ minLength: 1, maxLength: 20 })),
  action: fc.constantFrom(...ACTIONS),
  asset_class: fc.constantFrom(...ASSET_CLASSES),
  target_allocation_pct: decimalValue,
  quantity: fc.oneof(decimalValue, fc.integer()),
  notional: decimalValue,
  currency: fc.constantFrom('USD', 'EUR', 'BTC'),
  confidence: fc.nat(1000).map((n) => n / 1000),
  time_horizon: fc.string({ maxLength: 40 }),
  thesis: fc.string({ unit: 'grapheme', maxLength: 200 }),
  metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(metadataValue, fc.dictionary(fc.string({ maxLength: 4 }), metadataValue, { maxKeys: 3 })), { maxKeys: 4 }),
  occurred_at: fc.integer({ min: 60_000, max: 7 * DAY - 60_000 }).map((ago) => new Date(Date.now() - ago).toISOString()),
}, { requiredKeys: ['symbol', 'action'] });

/** A decision with one field replaced (or added) by hostile JSON text. */
const mutatedDecisionText = fc.tuple(decisionObject, fc.oneof(fc.constantFrom(...FIELDS, 'nonce', 'price'), fc.string({ maxLength: 10 })), hostileValueText, fc.nat(2).map((n) => n > 0))
  .map(([decision, field, value, mutate]) => {
    if (!mutate) return JSON.stringify(decision); // a third are left valid
    const rest: Record<string, unknown> = { ...decision };
    delete rest[field];
    const text = JSON.stringify(rest);
    return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(field)}:${value}}`;
  });

/** Anything at all as a body: JSON values, bytes, unicode text, truncated or padded decisions. */
const anyBody: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fc.tuple(mutatedDecisionText, fc.nat()).map(([text, n]) => text.slice(0, n % (text.length + 1))),
  fc.tuple(mutatedDecisionText, fc.constantFrom(' ', '\n', ',', '}', ' x', '\u0000')).map(([text, pad]) => text + pad),
  hostileValueText,
  mutatedDecisionText,
);

type Auth = 'valid' | 'missing' | 'garbage' | 'revoked' | 'read-only' | 'lowercase-scheme';
type RequestShape = { body: string | Buffer; contentType: string | undefined; key: 'fresh' | 'reuse' | 'missing' | string; auth: Auth; extra: Record<string, string> };

const headerValue = fc.string({ maxLength: 40 }).map((s) => s.trim());
const requestShape = (body: fc.Arbitrary<string | Buffer>, wild: boolean): fc.Arbitrary<RequestShape> => fc.record({
  body,
  contentType: wild
    ? fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', undefined, 'application/json; charset=iso-8859-1')
    : fc.constant('application/json'),
  key: wild
    ? fc.oneof({ arbitrary: fc.constant('fresh'), weight: 6 }, { arbitrary: fc.constant('reuse'), weight: 2 }, { arbitrary: fc.constant('missing'), weight: 1 }, { arbitrary: headerValue, weight: 1 })
    : fc.oneof({ arbitrary: fc.constant('fresh'), weight: 8 }, { arbitrary: fc.constant('reuse'), weight: 2 }),
  auth: wild
    ? fc.oneof({ arbitrary: fc.constant<Auth>('valid'), weight: 8 }, fc.constantFrom<Auth>('missing', 'garbage', 'revoked', 'read-only', 'lowercase-scheme'))
    : fc.constant<Auth>('valid'),
  extra: wild ? fc.dictionary(fc.constantFrom('x-anything', 'accept', 'x-forwarded-for', 'request-id', 'idempotent-replayed'), headerValue, { maxKeys: 2 }) : fc.constant({}),
});

// ---- the property ------------------------------------------------------------------------

await forEachStore('hostile requests to POST /v1/decisions', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let agent: Awaited<ReturnType<TestApp['agent']>>;
  const secrets = {} as Record<Auth, string | null>;
  const usedKeys: string[] = [];
  const answered = new Map<string, string>(); // idempotency key -> body of its 201
  let fresh = 0;
  let created = 0;

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000000' } });
    agent = await t.agent();
    const revoked = await t.operators.issueKey(agent.handle);
    const readOnly = await t.operators.issueKey(agent.handle, ['decisions:read']);
    assert.ok(revoked.ok && readOnly.ok);
    assert.ok((await t.operators.revokeKey(revoked.value.apiKey.id)).ok);
    Object.assign(secrets, {
      valid: `Bearer ${agent.secret}`, missing: null, garbage: 'Bearer dl_live_not-a-real-key', revoked: `Bearer ${revoked.value.apiKey.secret}`,
      'read-only': `Bearer ${readOnly.value.apiKey.secret}`, 'lowercase-scheme': `bearer ${agent.secret}`,
    });
  });
  after(() => closeTestApp(t, kind));

  function idempotencyKey(shape: RequestShape): string | null {
    if (shape.key === 'missing') return null;
    if (shape.key === 'reuse' && usedKeys.length > 0) return usedKeys[fresh % usedKeys.length]!;
    if (shape.key === 'fresh' || shape.key === 'reuse') {
      const key = `prop-${kind.name}-${process.pid}-${++fresh}`;
      usedKeys.push(key);
      return key;
    }
    return shape.key;
  }

  async function check(shape: RequestShape): Promise<void> {
    const head = await store.chainHead(agent.agentId);
    const key = idempotencyKey(shape);
    const auth = secrets[shape.auth];
    const res = await t.app.inject({
      method: 'POST', url: '/v1/decisions', payload: shape.body,
      headers: {
        ...shape.extra,
        ...(shape.contentType === undefined ? {} : { 'content-type': shape.contentType }),
        ...(key === null ? {} : { 'idempotency-key': key }),
        ...(auth === null ? {} : { authorization: auth }),
      },
    });
    assert.ok(res.statusCode < 500, `never a 5xx: ${res.statusCode} ${res.body}`);
    assert.ok([201, 400, 401, 403, 409, 413, 415].includes(res.statusCode), `an interface status: ${res.statusCode}`);
    const body = JSON.parse(res.body);
    const after = await store.chainHead(agent.agentId);

    if (res.statusCode >= 400) {
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(typeof body.error.code, 'string');
      assert.equal(typeof body.error.type, 'string');
      assert.equal(typeof body.error.message, 'string');
      assert.equal(body.error.request_id, res.headers['request-id']);
      assert.deepEqual(after, head, `a ${res.statusCode} ${body.error.code} recorded nothing`);
      return;
    }

    if (res.headers['idempotent-replayed'] === 'true') {
      assert.equal(res.body, answered.get(key!), 'a replay is the original body');
      assert.deepEqual(after, head, 'a replay records nothing');
      return;
    }

    created++;
    answered.set(key!, res.body);
    assert.equal(after.seq, head.seq + 1, 'a 201 appends exactly one record');
    assert.equal(body.verification.chain_seq, head.seq + 1);
    const stored = await store.findRecord(body.id);
    assert.ok(stored, 'the 201 is stored');
    assert.equal(sha256Hex(stored.content), body.verification.content_hash);
    assert.equal(stored.prevHash, head.hash);
    assert.equal(body.verification.chain_hash, chainHash({
      agent: agent.handle, seq: body.verification.chain_seq, id: body.id, type: 'decision', recordedAt: body.recorded_at,
      contentHash: body.verification.content_hash, prevHash: head.hash, signature: null,
    }));
    assert.equal(after.hash, body.verification.chain_hash);
  }

  test('valid decisions with one field mutated', TIMEOUT, async () => {
    await fc.assert(fc.asyncProperty(requestShape(mutatedDecisionText, false), check), { numRuns: RUNS[kind.name].mutated });
    assert.ok(created > RUNS[kind.name].mutated / 10, `enough bodies were valid to exercise the 201 path (${created})`);
  });

  test('anything at all, with random headers', TIMEOUT, async () => {
    await fc.assert(fc.asyncProperty(requestShape(anyBody, true), check), { numRuns: RUNS[kind.name].anything });
  });

  test('the whole chain still verifies', TIMEOUT, async () => {
    await assertChainVerifies(store, agent, created);
  });
});
