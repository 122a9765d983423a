// src/core/base64.ts: strict padded standard base64, the spelling of hashes and signatures in
// signed notes, checkpoints and tlog-proofs. Checked against Node's encoder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { b64Decode, b64Encode } from '../../src/core/index.ts';

describe('b64Encode / b64Decode', () => {
  it('matches the RFC 4648 test vectors', () => {
    const vectors: [string, string][] = [['', ''], ['f', 'Zg=='], ['fo', 'Zm8='], ['foo', 'Zm9v'], ['foob', 'Zm9vYg=='], ['fooba', 'Zm9vYmE='], ['foobar', 'Zm9vYmFy']];
    for (const [plain, encoded] of vectors) {
      assert.equal(b64Encode(new TextEncoder().encode(plain)), encoded);
      assert.deepEqual(b64Decode(encoded), new TextEncoder().encode(plain));
    }
  });

  it('refuses every other spelling', () => {
    for (const bad of ['Zg', 'Zg=', 'Zg===', 'Zm8', 'Zm8==', 'Zh==', 'Zm9=', ' Zm9v', 'Zm9v ', 'Zm9v\n', 'Zm-v', 'Zm_v', 'Z=9v', '=Zm9', 'Zm9vY', 'Zm9vYg=a', '\u00e9AAA']) {
      assert.equal(b64Decode(bad), null, JSON.stringify(bad));
    }
  });

  it('property: agrees with Buffer, and decoding is the inverse of encoding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = b64Encode(bytes);
        assert.equal(text, Buffer.from(bytes).toString('base64'));
        assert.deepEqual(b64Decode(text), bytes);
      }),
    );
  });

  it('property: any text that decodes is the encoding of what it decodes to', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'AQgw+/=9aZ_-'), maxLength: 16 }), (text) => {
        const bytes = b64Decode(text);
        if (bytes) assert.equal(b64Encode(bytes), text);
      }),
      { numRuns: 3000 },
    );
  });
});
