// canon_v1 serialisation, number normalisation over trees, UTF-8 and SHA-256.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonNumber, canonicalJson, normaliseNumbers, readJson, sha256Hex, utf8, type CanonValue, type JsonValue } from '../../src/core/index.ts';

describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code units (not code points, not locale)', () => {
    const out = canonicalJson({ '\uff61': '1', '\ud83d\ude00': '2', 'é': '3', b: '4', a: '5', A: '6', '': '7', aa: '8' });
    assert.equal(out, '{"":"7","A":"6","a":"5","aa":"8","b":"4","é":"3","😀":"2","｡":"1"}');
  });
  it('sorts nested objects and keeps array order', () => {
    assert.equal(canonicalJson({ z: [{ b: '1', a: '2' }, 'x', null, true, false, []], a: {} }), '{"a":{},"z":[{"a":"2","b":"1"},"x",null,true,false,[]]}');
  });
  it('escapes exactly as canon_v1 §1', () => {
    const expected: { [c: string]: string } = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r', '"': '\\"', '\\': '\\\\' };
    for (let c = 0; c < 0x20; c++) {
      const ch = String.fromCharCode(c);
      const esc = expected[ch] ?? '\\u' + c.toString(16).padStart(4, '0');
      assert.equal(canonicalJson(ch), `"${esc}"`);
    }
    assert.equal(canonicalJson('"'), '"\\""');
    assert.equal(canonicalJson('\\'), '"\\\\"');
    assert.equal(canonicalJson('\u001f'), '"\\u001f"');
    assert.equal(canonicalJson('/'), '"/"');
    assert.equal(canonicalJson('\u007f'), '"\u007f"');
    assert.equal(canonicalJson('\u2028\u2029'), '"\u2028\u2029"');
    assert.equal(canonicalJson('é😀\ufeff\uffff'), '"é😀\ufeff\uffff"');
    assert.equal(canonicalJson({ '\n': 'k' }), '{"\\n":"k"}');
  });
  it('rejects lone surrogates in strings and keys', () => {
    for (const s of ['\ud800', '\udfff', 'a\ud83d', '\ude00\ud83d']) {
      assert.throws(() => canonicalJson(s), TypeError);
      assert.throws(() => canonicalJson({ [s]: 'v' }), TypeError);
      assert.throws(() => canonicalJson(['ok', { k: [s] }]), TypeError);
    }
  });
  it('rejects numbers and every non-JSON value', () => {
    const bad: unknown[] = [1, 0, -0, NaN, Infinity, 1n, undefined, () => 1, Symbol('s'), new JsonNumber('1'), new Date(0), new Map(), /x/, new Uint8Array(1), Object.create({ inherited: 1 })];
    for (const b of bad) {
      assert.throws(() => canonicalJson(b as CanonValue), TypeError);
      assert.throws(() => canonicalJson({ k: b } as unknown as CanonValue), TypeError);
      assert.throws(() => canonicalJson([b] as unknown as CanonValue), TypeError);
    }
    // eslint-disable-next-line no-sparse-arrays
    assert.throws(() => canonicalJson([, 'x'] as unknown as CanonValue), TypeError);
  });
  it('rejects cycles with a TypeError, not a stack overflow', () => {
    const a: { [k: string]: CanonValue } = {};
    a.self = a;
    assert.throws(() => canonicalJson(a), TypeError);
  });
  it('accepts null-prototype objects and __proto__ keys', () => {
    const o = Object.create(null) as { [k: string]: CanonValue };
    o.b = '1';
    Object.defineProperty(o, '__proto__', { value: 'p', enumerable: true });
    assert.equal(canonicalJson(o), '{"__proto__":"p","b":"1"}');
  });
  it('property: equals JSON.stringify with sorted keys for number-free values', () => {
    const sorter = (_k: string, v: unknown): unknown => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const o: Record<string, unknown> = {};
        for (const k of Object.keys(v).sort()) o[k] = (v as Record<string, unknown>)[k];
        return o;
      }
      return v;
    };
    fc.assert(
      fc.property(canonArb, (v) => {
        assert.equal(canonicalJson(v), JSON.stringify(v, sorter));
      }),
      { numRuns: 500 },
    );
  });
});

const canonArb: fc.Arbitrary<CanonValue> = fc.letrec<{ v: CanonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.string({ unit: 'grapheme' }),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme' }).filter((k) => k !== '__proto__'), tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('normaliseNumbers', () => {
  const read = (t: string): JsonValue => {
    const r = readJson(t);
    assert.ok(r.ok);
    return r.value;
  };
  it('turns every number at any depth into its normalised string', () => {
    const r = normaliseNumbers(read('{"a":[1.50,{"b":-0.0}],"c":1e3,"d":"1e3","e":[[[2.5E-3]]]}'));
    assert.deepEqual(r, { ok: true, value: { a: ['1.5', { b: '0' }], c: '1000', d: '1e3', e: [[['0.0025']]] } });
  });
  it('names the path of a too-long number, with an optional base', () => {
    assert.deepEqual(normaliseNumbers(read('{"a":{"b":[1,2,1e999]}}')), { ok: false, path: 'a.b.2', reason: 'too_long' });
    assert.deepEqual(normaliseNumbers(read('{"a":{"b":[1,2,1e999]}}'), 'metadata'), { ok: false, path: 'metadata.a.b.2', reason: 'too_long' });
    assert.deepEqual(normaliseNumbers(read('1e-999')), { ok: false, path: '', reason: 'too_long' });
  });
  it('keeps __proto__ as an own key', () => {
    const r = normaliseNumbers(read('{"__proto__":{"x":1}}'));
    assert.ok(r.ok);
    assert.equal(canonicalJson(r.value), '{"__proto__":{"x":"1"}}');
    assert.equal(Object.getPrototypeOf(r.value), Object.prototype);
  });
  it('rejects a hand-made JsonNumber that is not the grammar', () => {
    assert.throws(() => normaliseNumbers(new JsonNumber('007')), TypeError);
  });
});

describe('utf8 and sha256Hex', () => {
  it('encodes UTF-8', () => {
    assert.deepEqual([...utf8('aé€😀')], [0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80]);
  });
  it('hashes strings as UTF-8 and bytes as bytes, lowercase hex', () => {
    assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256Hex('é😀'), sha256Hex(utf8('é😀')));
    assert.equal(sha256Hex('é😀'), createHash('sha256').update(Buffer.from('é😀', 'utf8')).digest('hex'));
  });
});
