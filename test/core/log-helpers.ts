// Shared by the log_v1 core tests: vector loading, hex, and Ed25519 on node:crypto injected into
// src/core/note.ts (raw 32-byte keys wrapped in DER, as a Node verifier would do it).
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ed25519Sign, Ed25519Verify } from '../../src/core/index.ts';

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors', 'merkle');

export function loadMerkleVectors<T>(name: string): T {
  return JSON.parse(readFileSync(join(VECTORS, name), 'utf8')) as T;
}

export function fromHex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'hex'));
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export const nodeEd25519Verify: Ed25519Verify = (publicKey, message, signature) => {
  if (publicKey.length !== 32) return false;
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: 'der', type: 'spki' });
  return verify(null, message, key, signature);
};

/** An Ed25519 key from a 32-byte seed: its raw public key and a signer. */
export function ed25519FromSeed(seed: Uint8Array): { publicKey: Uint8Array; sign: Ed25519Sign } {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return {
    publicKey: new Uint8Array(spki.subarray(SPKI_ED25519_PREFIX.length)),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}
