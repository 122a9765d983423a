// src/core/cosignature.ts: C2SP tlog-cosignature v1 (Ed25519, type 0x04) against the vectors of
// test/vectors/witness/ byte for byte: key IDs, the vkey, the signed message, the line a witness
// returns, and verification (a wrong time, key, body or length is refused). Ed25519 is node:crypto.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import {
  b64Decode,
  b64Encode,
  cosignatureMessage,
  cosignerKeyId,
  encodeCosignerVkey,
  openCheckpoint,
  parseCosignerVkey,
  parseNote,
  parseVkey,
  signCosignature,
  verifyCosignature,
  type LogResult,
} from '../../src/core/index.ts';
import { ed25519FromSeed, fromHex, nodeEd25519Verify, toHex } from './log-helpers.ts';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors', 'witness');
type Vectors = {
  log: { seed_hex: string; vkey: string };
  witness: { seed_hex: string; name: string; vkey: string };
  time: number;
  checkpoint_8: string;
  signed_message: string;
  payload_prefix_hex: string;
  key_ids: { vkey: string; type: number; key_id_hex: string; as_cosigner_key_id_hex?: string }[];
  spec_example_line: { prefix: string; key_id_hex: string; time: number };
};
const v = JSON.parse(readFileSync(join(DIR, 'cosignature-v1.json'), 'utf8')) as Vectors;
const response = readFileSync(join(DIR, 'add-checkpoint-response.txt'), 'utf8');
const witness = ed25519FromSeed(fromHex(v.witness.seed_hex));
const BODY_8 = v.checkpoint_8.slice(0, v.checkpoint_8.indexOf('\n\n') + 1);

function value<T>(r: LogResult<T>): T {
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

describe('cosignature/v1 keys', () => {
  it('the witness vkey of the constructed exchange is encoded and parsed exactly', () => {
    assert.equal(value(encodeCosignerVkey(v.witness.name, witness.publicKey)), v.witness.vkey);
    const vkey = value(parseCosignerVkey(v.witness.vkey));
    assert.equal(toHex(vkey.keyId), 'df1c0a35');
    assert.deepEqual(vkey.publicKey, witness.publicKey);
  });

  it('key IDs of the transparency-dev/formats vkeys: 0x04 over the key, and the 0x01 key recomputed as 0x04', () => {
    for (const k of v.key_ids) {
      const [name, , keyB64] = [k.vkey.slice(0, k.vkey.indexOf('+')), '', k.vkey.slice(k.vkey.indexOf('+', k.vkey.indexOf('+') + 1) + 1)];
      const material = b64Decode(keyB64)!;
      assert.equal(material[0], k.type);
      if (k.type === 4) {
        assert.equal(toHex(cosignerKeyId(name, material.slice(1))), k.key_id_hex);
        assert.ok(parseCosignerVkey(k.vkey).ok);
      } else {
        assert.equal(toHex(value(parseVkey(k.vkey)).keyId), k.key_id_hex);
        assert.equal(toHex(cosignerKeyId(name, material.slice(1))), k.as_cosigner_key_id_hex);
        assert.equal(parseCosignerVkey(k.vkey).ok, false, 'a 0x01 note key is not a cosigner vkey');
      }
    }
  });

  it('a vkey whose key ID does not match, or of a wrong length, is refused', () => {
    assert.equal(parseCosignerVkey(v.witness.vkey.replace('+df1c0a35+', '+df1c0a36+')).ok, false);
    assert.equal(parseCosignerVkey(v.witness.vkey.slice(0, -4)).ok, false);
  });
});

describe('cosignature/v1 signing and verification', () => {
  it('the signed message is the 97 bytes of the reference', () => {
    const message = value(cosignatureMessage(BODY_8, v.time));
    assert.equal(message.length, 97);
    assert.equal(Buffer.from(message).toString('utf8'), v.signed_message);
  });

  it('signing the size-8 checkpoint at T gives the reference response line byte for byte', () => {
    const line = value(signCosignature(BODY_8, v.time, { name: v.witness.name, publicKey: witness.publicKey }, witness.sign));
    assert.equal(line, response);
    const payload = b64Decode(line.slice(line.lastIndexOf(' ') + 1, -1))!;
    assert.equal(payload.length, 76);
    assert.equal(toHex(payload.subarray(0, 12)), v.payload_prefix_hex);
  });

  it('the cosigned note verifies under the witness vkey, and the log vkey still opens it', () => {
    const cosigned = v.checkpoint_8 + response;
    const cosig = value(verifyCosignature(cosigned, value(parseCosignerVkey(v.witness.vkey)), nodeEd25519Verify));
    assert.equal(cosig.time, v.time);
    assert.equal(cosig.name, v.witness.name);
    assert.ok(openCheckpoint(cosigned, value(parseVkey(v.log.vkey)), nodeEd25519Verify).ok);
  });

  it('the spec example line carries key ID 8d66cf3f and T = 1679315147 big-endian', () => {
    const bytes = b64Decode(v.spec_example_line.prefix.split(' ')[2]!)!;
    assert.equal(toHex(bytes.subarray(0, 4)), v.spec_example_line.key_id_hex);
    assert.equal(Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(4)), v.spec_example_line.time);
  });

  it('refuses: one changed timestamp byte, another body, a missing cosignature, a truncated payload, time 0', () => {
    const vkey = value(parseCosignerVkey(v.witness.vkey));
    const payload = b64Decode(response.slice(response.lastIndexOf(' ') + 1, -1))!;
    const withPayload = (p: Uint8Array) => `${v.checkpoint_8}\u2014 ${v.witness.name} ${b64Encode(p)}\n`;
    const retimed = payload.slice();
    retimed[11] = retimed[11]! ^ 1;
    assert.match(String((verifyCosignature(withPayload(retimed), vkey, nodeEd25519Verify) as { error: string }).error), /does not verify/);
    assert.equal(verifyCosignature(withPayload(payload.slice(0, 75)), vkey, nodeEd25519Verify).ok, false);
    const zeroTime = payload.slice();
    zeroTime.fill(0, 4, 12);
    assert.equal(verifyCosignature(withPayload(zeroTime), vkey, nodeEd25519Verify).ok, false);
    const other = v.checkpoint_8.replace('\n8\n', '\n9\n') + response;
    assert.equal(verifyCosignature(other, vkey, nodeEd25519Verify).ok, false);
    assert.equal(verifyCosignature(v.checkpoint_8, vkey, nodeEd25519Verify).ok, false);
    assert.equal(signCosignature(BODY_8, 0, { name: v.witness.name, publicKey: witness.publicKey }, witness.sign).ok, false);
    // A plain signed-note signature (no header lines) by the witness key is not a cosignature.
    const plain = witness.sign(new TextEncoder().encode(BODY_8));
    const fake = new Uint8Array(76);
    fake.set(payload.subarray(0, 12));
    fake.set(plain, 12);
    assert.equal(verifyCosignature(withPayload(fake), vkey, nodeEd25519Verify).ok, false);
    assert.ok(parseNote(withPayload(fake)).ok);
  });
});
