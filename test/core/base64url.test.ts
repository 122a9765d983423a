// Strict unpadded base64url.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { b64urlDecode, b64urlEncode } from '../../src/core/index.ts';

describe('base64url', () => {
  it('RFC 4648 test vectors (unpadded, url alphabet)', () => {
    const cases: [string, string][] = [['', ''], ['f', 'Zg'], ['fo', 'Zm8'], ['foo', 'Zm9v'], ['foob', 'Zm9vYg'], ['fooba', 'Zm9vYmE'], ['foobar', 'Zm9vYmFy']];
    for (const [plain, enc] of cases) {
      assert.equal(b64urlEncode(new TextEncoder().encode(plain)), enc);
      assert.deepEqual(b64urlDecode(enc), new TextEncoder().encode(plain));
    }
    assert.equal(b64urlEncode(new Uint8Array([0xfb, 0xff, 0xbf])), '-_-_');
  });
  it('property: round-trips and matches Buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const s = b64urlEncode(bytes);
        assert.equal(s, Buffer.from(bytes).toString('base64url'));
        assert.deepEqual(b64urlDecode(s), bytes);
      }),
    );
  });
  it('rejects padding, other alphabets, bad lengths and non-canonical trailing bits', () => {
    for (const bad of ['Zg==', 'Zm8=', 'Z', 'Zm9vY', 'Zm9v+', 'Zm9v/w', 'Zm 9v', 'Zm9v\n', 'Zh', 'Zm9', 'Zm9vYh', '-_-é', 'AAA\u0100']) {
      assert.equal(b64urlDecode(bad), null, bad);
    }
    // 'Zh' differs from 'Zg' only in trailing bits: both would decode to 'f' if not strict.
    assert.deepEqual(b64urlDecode('Zg'), new TextEncoder().encode('f'));
  });
});
