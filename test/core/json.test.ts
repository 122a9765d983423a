// The lossless reader: strictness, paths, prototype safety, and agreement with JSON.parse.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonNumber, MAX_JSON_DEPTH, hasLoneSurrogate, readJson, toPlain, type JsonValue } from '../../src/core/index.ts';

function ok(text: string): JsonValue {
  const r = readJson(text);
  if (!r.ok) assert.fail(`expected ${JSON.stringify(text)} to parse: ${r.error.message}`);
  return r.value;
}

function err(text: string): { message: string; path: string } {
  const r = readJson(text);
  if (r.ok) assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
  return r.error;
}

describe('readJson: values', () => {
  it('keeps number text exactly', () => {
    const v = ok('[0, -0, 1.50, 1e3, -2.5E-3, 9007199254740993, 1e999999999, 0.1000000000000000055511151231257827]');
    assert.ok(Array.isArray(v));
    assert.deepEqual(
      v.map((n) => (n as JsonNumber).text),
      ['0', '-0', '1.50', '1e3', '-2.5E-3', '9007199254740993', '1e999999999', '0.1000000000000000055511151231257827'],
    );
    assert.ok(v.every((n) => n instanceof JsonNumber));
  });
  it('reads literals, strings, escapes and nesting', () => {
    assert.equal(ok('true'), true);
    assert.equal(ok('false'), false);
    assert.equal(ok('null'), null);
    assert.equal(ok(String.raw`"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00"`), 'a"b\\c/d\b\f\n\r\t\u00e9\u20ac\ud83d\ude00');
    assert.equal(ok('"😀 raw pair"'), '😀 raw pair');
    assert.deepEqual(toPlain(ok('{"a":[{"b":{}},[]],"c":""}')), { a: [{ b: {} }, []], c: '' });
  });
  it('accepts exactly the RFC 8259 whitespace around any token', () => {
    assert.deepEqual(toPlain(ok(' \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ 1 , 2 ] \t\n\r} \t\n\r')), { a: [1, 2] });
    for (const ws of ['\u00a0', '\ufeff', '\u2028', '\v', '\f']) {
      err(`${ws}1`);
      err(`[1${ws}]`);
    }
  });
  it('accepts U+2028, U+2029 and DEL raw inside strings', () => {
    assert.equal(ok('"\u2028\u2029\u007f"'), '\u2028\u2029\u007f');
  });
});

describe('readJson: syntax errors carry a position and a path', () => {
  const cases: [string, string, RegExp][] = [
    ['', '', /end of input at position 0/],
    ['   ', '', /end of input at position 3/],
    ['{', '', /end of input at position 1/],
    ['{"a":1,}', '', /position 7/],
    ['[1,]', '1', /position 3/],
    ['[1 2]', '', /position 3/],
    ['{"a" 1}', '', /position 5/],
    ['{a:1}', '', /position 1/],
    ["{'a':1}", '', /position 1/],
    ['{"a":{"b":[1,tru]}}', 'a.b.1', /position 16/],
    ['{"a":{"b":[1,2,nul]}}', 'a.b.2', /position 18/],
    ['01', '', /position 1/],
    ['-', '', /position 1/],
    ['1.', '', /position 2/],
    ['.5', '', /position 0/],
    ['+1', '', /position 0/],
    ['1e', '', /position 2/],
    ['1e+', '', /position 3/],
    ['NaN', '', /position 0/],
    ['Infinity', '', /position 0/],
    ['"abc', '', /position 0/],
    ['{"a":"x\ny"}', 'a', /position 7/],
    ['"\t"', '', /position 1/],
    [String.raw`"\x"`, '', /position 2/],
    [String.raw`"\u12G4"`, '', /position 5/],
    [String.raw`"\U0041"`, '', /position 2/],
    ['1 2', '', /position 2/],
    ['{} {}', '', /position 3/],
    ['\ufeff{}', '', /position 0/],
    ['/* c */ 1', '', /position 0/],
    ['[1] // c', '', /position 4/],
  ];
  for (const [text, path, msg] of cases) {
    it(JSON.stringify(text), () => {
      const e = err(text);
      assert.equal(e.path, path);
      assert.match(e.message, msg);
    });
  }
});

describe('readJson: duplicate keys', () => {
  it('rejects at the top level with the key as path', () => {
    const e = err('{"a":1,"b":2,"a":3}');
    assert.equal(e.path, 'a');
    assert.match(e.message, /Duplicate object key at position 13/);
  });
  it('rejects deep inside with the full path', () => {
    assert.equal(err('{"metadata":{"x":[{"k":1,"k":1}]}}').path, 'metadata.x.0.k');
  });
  it('rejects keys that are equal only after unescaping', () => {
    assert.equal(err(String.raw`{"é":1,"\u00e9":2}`).path, 'é');
    assert.equal(err(String.raw`{"a":1,"\u0061":2}`).path, 'a');
  });
  it('accepts keys that differ only in normalisation form', () => {
    assert.deepEqual(Object.keys(ok(String.raw`{"\u00e9":1,"e\u0301":2}`) as object), ['\u00e9', 'e\u0301']);
  });
  it('rejects a duplicate __proto__', () => {
    assert.equal(err('{"__proto__":1,"__proto__":2}').path, '__proto__');
  });
});

describe('readJson: lone surrogates', () => {
  const cases: [string, string][] = [
    [String.raw`"\ud800"`, ''],
    [String.raw`"\udc00"`, ''],
    [String.raw`"x\ud83dy"`, ''],
    [String.raw`"\ude00\ud83d"`, ''],
    [String.raw`"\ud83d\u0041"`, ''],
    [String.raw`{"a":{"b":["ok","\udbff"]}}`, 'a.b.1'],
    ['"\ud800"', ''],
    ['"\udfff"', ''],
    ['{"t":"abc\ud83d"}', 't'],
    [String.raw`{"m":{"\ud800":1}}`, 'm.\ufffd'],
    ['{"m":{"k\udc00":1}}', 'm.k\ufffd'],
  ];
  for (const [text, path] of cases) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      const e = err(text);
      assert.equal(e.path, path);
      assert.match(e.message, /[Ll]one surrogate/);
    });
  }
  it('accepts well-formed pairs, escaped, raw and mixed', () => {
    assert.equal(ok(String.raw`"\ud83d\ude00"`), '😀');
    assert.equal(ok('"\ud83d\ude00"'), '😀');
    assert.equal(ok('"\\ud83d\ude00"'), '😀');
    assert.equal(ok('"\ud83d\\ude00"'), '😀');
    assert.equal(ok(String.raw`"\udbff\udfff"`), '\u{10ffff}');
  });
});

describe('readJson: __proto__ and prototype safety', () => {
  it('keeps __proto__ as an ordinary own property and pollutes nothing', () => {
    const v = ok('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as { [k: string]: JsonValue };
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ['__proto__', 'constructor']);
    assert.ok(Object.hasOwn(v, '__proto__'));
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.equal((v as { polluted?: unknown }).polluted, undefined);
    const inner = Object.getOwnPropertyDescriptor(v, '__proto__')?.value as { [k: string]: JsonValue };
    assert.equal(inner.polluted, true);
  });
  it('toPlain keeps __proto__ own too', () => {
    const p = toPlain(ok('{"__proto__":{"x":1},"a":[1.5,"2"]}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.deepEqual(Object.keys(p), ['__proto__', 'a']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(p, '__proto__')?.value, { x: 1 });
    assert.deepEqual(p.a, [1.5, '2']);
    assert.equal(({} as { x?: unknown }).x, undefined);
  });
  it('toPlain equals JSON.parse, __proto__ included', () => {
    const text = '{"__proto__":{"x":[1,2e2,-0.5]},"b":null,"c":[true,false,"s"]}';
    assert.deepEqual(toPlain(ok(text)), JSON.parse(text));
  });
});

describe('readJson: depth', () => {
  const nest = (n: number, open: string, close: string, inner = ''): string => open.repeat(n) + inner + close.repeat(n);
  it(`accepts ${MAX_JSON_DEPTH} levels of arrays and objects`, () => {
    ok(nest(64, '[', ']'));
    ok(nest(63, '{"a":', '}', '{}'));
    ok(nest(63, '{"a":', '}', '[]'));
    ok(nest(63, '[', ']', '{"deepest":1}'));
  });
  it('rejects 65 levels with the path to the too-deep container', () => {
    const e = err(nest(65, '[', ']'));
    assert.match(e.message, /deeper than 64/);
    assert.equal(e.path, Array(64).fill('0').join('.'));
    const e2 = err(nest(64, '{"k":', '}', '[1]'));
    assert.equal(e2.path, Array(64).fill('k').join('.'));
  });
  it('rejects huge nesting without a stack overflow', () => {
    assert.match(err(nest(100_000, '[', ']')).message, /deeper than 64/);
  });
});

describe('readJson: agrees with JSON.parse on valid JSON', () => {
  it('property: same tree (numbers as Number) or rejected for lone surrogates', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }), (value) => {
        const text = JSON.stringify(value);
        const r = readJson(text);
        const parsed: unknown = JSON.parse(text);
        if (anyLoneSurrogate(parsed)) {
          assert.equal(r.ok, false);
        } else {
          assert.ok(r.ok, r.ok ? '' : r.error.message);
          assert.deepEqual(toPlain(r.value), parsed);
        }
      }),
      { numRuns: 500 },
    );
  });
  it('property: pretty-printed text reads the same', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const compact = readJson(JSON.stringify(value));
        const pretty = readJson(JSON.stringify(value, null, '\t'));
        assert.ok(compact.ok && pretty.ok);
        assert.deepEqual(toPlain(pretty.value), toPlain(compact.value));
      }),
      { numRuns: 200 },
    );
  });
});

function anyLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return hasLoneSurrogate(v);
  if (Array.isArray(v)) return v.some(anyLoneSurrogate);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => hasLoneSurrogate(k) || anyLoneSurrogate(x));
  return false;
}

describe('readJson: speed', () => {
  it('reads a 5 MB document quickly', () => {
    const item = { symbol: 'AAPL', action: 'BUY', quantity: 1.5, thesis: 'x'.repeat(200) + '\\n\u00e9😀', metadata: { a: [1, 2, 3], b: { c: null } } };
    const text = JSON.stringify(Array.from({ length: 15_000 }, (_, i) => ({ ...item, i })));
    const t0 = performance.now();
    const r = readJson(text);
    const ms = performance.now() - t0;
    assert.ok(r.ok);
    assert.ok(ms < 2000, `took ${ms} ms`);
  });
});
