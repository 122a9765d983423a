// Decision content: defaults, decimals and ranges, metadata paths, occurred_at rules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  JsonNumber,
  canonicalJson,
  checkOccurredAt,
  decisionContent,
  readJson,
  DECISION_DECIMAL_FIELDS,
  type CanonValue,
  type FieldError,
  type JsonValue,
} from '../../src/core/index.ts';

const NOW = new Date('2025-06-02T12:00:00.000Z');

function fields(text: string): { [k: string]: JsonValue } {
  const r = readJson(text);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return r.value as { [k: string]: JsonValue };
}

function doc(text: string, extra: { nonce?: string; now?: Date } = {}): { [k: string]: CanonValue } {
  const r = decisionContent({ agent: 'bot', fields: fields(text), now: extra.now ?? NOW, nonce: extra.nonce });
  if (!r.ok) assert.fail(`${r.error.param}: ${r.error.message}`);
  return r.document as { [k: string]: CanonValue };
}

function fail(text: string, now = NOW): FieldError {
  const r = decisionContent({ agent: 'bot', fields: fields(text), now });
  if (r.ok) assert.fail(`accepted: ${canonicalJson(r.document)}`);
  return r.error;
}

describe('decisionContent: document', () => {
  it('envelope, defaults, and absent optional fields', () => {
    assert.deepEqual(doc('{"symbol":"AAPL","action":"BUY"}'), {
      canon: 'canon_v1', type: 'decision', agent: 'bot', symbol: 'AAPL', action: 'BUY', asset_class: 'US_EQUITY', currency: 'USD',
    });
  });
  it('keeps sent asset_class and currency', () => {
    const d = doc('{"symbol":"BTC","action":"BUY","asset_class":"CRYPTO","currency":"EUR"}');
    assert.equal(d.asset_class, 'CRYPTO');
    assert.equal(d.currency, 'EUR');
  });
  it('nonce only when given', () => {
    assert.equal(doc('{"symbol":"A","action":"BUY"}', { nonce: 'n-1' }).nonce, 'n-1');
    assert.ok(!('nonce' in doc('{"symbol":"A","action":"BUY"}')));
  });
  it('normalises Decimals from numbers and strings alike', () => {
    const a = doc('{"symbol":"A","action":"BUY","quantity":0.1,"notional":"1e-1","target_allocation_pct":"12.50","confidence":8E-1}');
    assert.deepEqual([a.quantity, a.notional, a.target_allocation_pct, a.confidence], ['0.1', '0.1', '12.5', '0.8']);
    assert.deepEqual([...DECISION_DECIMAL_FIELDS], ['target_allocation_pct', 'quantity', 'notional', 'confidence']);
  });
  it('normalises metadata numbers at any depth and leaves strings alone', () => {
    const d = doc('{"symbol":"A","action":"BUY","metadata":{"a":[1.0,"1.0",{"b":-0}],"__proto__":{"c":2e1}}}');
    assert.equal(canonicalJson(d), '{"action":"BUY","agent":"bot","asset_class":"US_EQUITY","canon":"canon_v1","currency":"USD","metadata":{"__proto__":{"c":"20"},"a":["1","1.0",{"b":"0"}]},"symbol":"A","type":"decision"}');
    assert.equal(({} as { c?: unknown }).c, undefined);
  });
  it('keeps occurred_at exactly as written', () => {
    assert.equal(doc('{"symbol":"A","action":"BUY","occurred_at":"2025-06-02T13:00:00.120000+02:00"}').occurred_at, '2025-06-02T13:00:00.120000+02:00');
  });
  it('payload is the canonical JSON of the document', () => {
    const d = doc('{"thesis":"why \\u2028","action":"SELL","symbol":"X"}', { nonce: 'n' });
    assert.equal(canonicalJson(d), '{"action":"SELL","agent":"bot","asset_class":"US_EQUITY","canon":"canon_v1","currency":"USD","nonce":"n","symbol":"X","thesis":"why \u2028","type":"decision"}');
  });
});

describe('decisionContent: Decimal errors', () => {
  const cases: [string, string, RegExp][] = [
    ['"quantity":"007"', 'quantity', /decimal/],
    ['"quantity":" 1"', 'quantity', /decimal/],
    ['"quantity":"1,5"', 'quantity', /decimal/],
    ['"notional":"NaN"', 'notional', /decimal/],
    ['"notional":true', 'notional', /decimal/],
    ['"notional":null', 'notional', /decimal/],
    ['"notional":[1]', 'notional', /decimal/],
    ['"quantity":1e999999999', 'quantity', /too long/],
    ['"quantity":"-1e-999999999"', 'quantity', /too long/],
    ['"target_allocation_pct":-0.0001', 'target_allocation_pct', /between 0 and 100/],
    ['"target_allocation_pct":"100.0000000000000000000001"', 'target_allocation_pct', /between 0 and 100/],
    ['"target_allocation_pct":1e3', 'target_allocation_pct', /between 0 and 100/],
    ['"confidence":1.0000001', 'confidence', /between 0 and 1/],
    ['"confidence":"-1e-30"', 'confidence', /between 0 and 1/],
    ['"metadata":{"a":{"b":[1,2,1e999]}}', 'metadata.a.b.2', /too long/],
    ['"metadata":{"x.y":[{"z":1e-70}]}', 'metadata.x.y.0.z', /too long/],
    ['"metadata":[]', 'metadata', /object/],
    ['"metadata":"x"', 'metadata', /object/],
  ];
  for (const [member, param, msg] of cases) {
    it(member, () => {
      const e = fail(`{"symbol":"A","action":"BUY",${member}}`);
      assert.equal(e.param, param);
      assert.match(e.message, msg);
    });
  }
  it('range boundaries are inclusive, in any spelling', () => {
    const d = doc('{"symbol":"A","action":"BUY","target_allocation_pct":"1e2","confidence":-0.0}');
    assert.equal(d.target_allocation_pct, '100');
    assert.equal(d.confidence, '0');
    assert.equal(doc('{"symbol":"A","action":"BUY","confidence":"100e-2","target_allocation_pct":0}').confidence, '1');
  });
});

describe('decisionContent: defensive schema checks', () => {
  const cases: [string, string][] = [
    ['{"action":"BUY"}', 'symbol'],
    ['{"symbol":"A"}', 'action'],
    ['{"symbol":1,"action":"BUY"}', 'symbol'],
    ['{"symbol":"ABCDEFGHIJKLMNOPQRSTU","action":"BUY"}', 'symbol'],
    ['{"symbol":"A","action":"buy"}', 'action'],
    ['{"symbol":"A","action":"BUY","asset_class":"STOCK"}', 'asset_class'],
    ['{"symbol":"A","action":"BUY","asset_class":null}', 'asset_class'],
    ['{"symbol":"A","action":"BUY","currency":"US"}', 'currency'],
    ['{"symbol":"A","action":"BUY","currency":"USDT"}', 'currency'],
    ['{"symbol":"A","action":"BUY","time_horizon":"' + 'x'.repeat(121) + '"}', 'time_horizon'],
    ['{"symbol":"A","action":"BUY","time_horizon":"5\\ttd"}', 'time_horizon'],
    ['{"symbol":"A","action":"BUY","time_horizon":"5 td\\r"}', 'time_horizon'],
    ['{"symbol":"A\\n","action":"BUY"}', 'symbol'],
    ['{"symbol":"A","action":"BUY","currency":"U\\u0000D"}', 'currency'],
    ['{"symbol":"A","action":"BUY","thesis":"' + 'x'.repeat(8001) + '"}', 'thesis'],
    ['{"symbol":"A","action":"BUY","occurred_at":5}', 'occurred_at'],
    ['{"symbol":"A","action":"BUY","signature":{}}', 'signature'],
    ['{"symbol":"A","action":"BUY","nonce":"n"}', 'nonce'],
    ['{"symbol":"A","action":"BUY","canon":"canon_v2"}', 'canon'],
    ['{"symbol":"A","action":"BUY","agent":"other"}', 'agent'],
  ];
  for (const [text, param] of cases) {
    it(text.length > 70 ? text.slice(0, 70) + '…' : text, () => assert.equal(fail(text).param, param));
  }
  it('counts length in code points, like JSON Schema', () => {
    assert.equal(doc('{"symbol":"' + '😀'.repeat(20) + '","action":"BUY","currency":"€€€"}').currency, '€€€');
  });
  it('rejects lone surrogates that did not come through the reader', () => {
    const r = decisionContent({ agent: 'bot', now: NOW, fields: { symbol: 'A', action: 'BUY', metadata: { k: ['\ud800'] } } });
    assert.deepEqual(r.ok ? null : r.error.param, 'metadata.k.0');
    const r2 = decisionContent({ agent: 'bot', now: NOW, fields: { symbol: 'A', action: 'BUY', thesis: 'x\udc00' } });
    assert.deepEqual(r2.ok ? null : r2.error.param, 'thesis');
  });
  it('accepts hand-built fields with JsonNumber', () => {
    const r = decisionContent({ agent: 'bot', now: NOW, fields: { symbol: 'A', action: 'BUY', quantity: new JsonNumber('2.50') } });
    assert.ok(r.ok);
    assert.equal((r.document as { quantity: string }).quantity, '2.5');
  });
});

describe('occurred_at', () => {
  const at = (s: string, now = NOW): FieldError | null => checkOccurredAt(s, now);
  it('accepts Z and numeric offsets, fractions of any length', () => {
    for (const s of [
      '2025-06-02T12:00:00Z', '2025-06-02T12:00:00.000Z', '2025-06-02t11:00:00z', '2025-06-02T14:00:00+02:00',
      '2025-06-02T06:30:00-05:30', '2025-06-02T11:59:59.999999999Z', '2025-05-26T12:00:00Z', '2025-05-26T12:00:00.000000001Z',
      '2025-05-27T00:00:00+00:00', '2025-05-27T00:00:00-00:00', '2025-05-31T23:59:60Z', '2025-06-01T01:59:60+02:00',
    ]) {
      assert.equal(at(s), null, s);
    }
  });
  it('rejects forms that are not RFC 3339 with an offset', () => {
    for (const s of [
      '2025-06-01T12:00:00', '2025-06-01', '2025-06-01 12:00:00Z', '2025-06-01T12:00Z', '2025-06-01T12:00:00.Z',
      '2025-06-01T12:00:00+0200', '2025-06-01T12:00:00+02', '2025-6-01T12:00:00Z', '25-06-01T12:00:00Z',
      '+002025-06-01T12:00:00Z', '2025-06-01T12:00:00 Z', ' 2025-06-01T12:00:00Z', '2025-06-01T12:00:00Z ',
      '2025-06-01T12:00:00UTC', '２025-06-01T12:00:00Z', '2025-06-01T12:00:00\u0662Z', 'yesterday', '',
    ]) {
      const e = at(s);
      assert.equal(e?.param, 'occurred_at', s);
      assert.match(e!.message, /RFC 3339/, s);
    }
  });
  it('rejects impossible calendar dates and times', () => {
    for (const s of [
      '2025-13-01T00:00:00Z', '2025-00-10T00:00:00Z', '2025-02-29T00:00:00Z', '2025-02-30T00:00:00Z', '2025-04-31T00:00:00Z',
      '2025-06-00T00:00:00Z', '2025-06-01T24:00:00Z', '2025-06-01T23:60:00Z', '2025-06-01T23:59:61Z', '2025-06-01T12:00:60Z',
      '2025-06-01T12:00:00+24:00', '2025-06-01T12:00:00+02:60', '1900-02-29T00:00:00Z',
    ]) {
      const e = at(s, new Date('2025-06-02T00:00:00Z'));
      assert.equal(e?.param, 'occurred_at', s);
      assert.match(e!.message, /not a real calendar date/, s);
    }
    assert.equal(at('2024-02-29T10:00:00Z', new Date('2024-03-01T00:00:00Z')), null);
    assert.equal(at('2000-02-29T10:00:00Z', new Date('2000-03-01T00:00:00Z')), null);
  });
  it('cannot be in the future, down to sub-millisecond digits', () => {
    for (const s of ['2025-06-02T12:00:00.001Z', '2025-06-02T12:00:00.0000001Z', '2025-06-02T14:00:00.001+02:00', '2099-01-01T00:00:00Z']) {
      assert.match(at(s)!.message, /future/, s);
    }
    assert.equal(at('2025-06-02T12:00:00.000000Z'), null);
  });
  it('cannot be more than 7 days old', () => {
    for (const s of ['2025-05-26T11:59:59.999Z', '2025-05-26T13:59:59+02:00', '2000-01-01T00:00:00Z', '0000-01-01T00:00:00Z']) {
      assert.match(at(s)!.message, /7 days/, s);
    }
    assert.match(at('2025-05-26T11:59:59.9999Z')!.message, /7 days/);
  });
  it('goes through decisionContent with param occurred_at', () => {
    const e = fail('{"symbol":"A","action":"BUY","occurred_at":"2025-06-02T12:00:01Z"}');
    assert.deepEqual(e, { param: 'occurred_at', message: 'occurred_at cannot be in the future' });
  });
});
