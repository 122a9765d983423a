// Ed25519 signature checks through node:crypto over raw keys (the core's second platform seam
// beside sha256.ts; a browser build swaps it for WebCrypto or @noble/ed25519), the form the API and exports use:
// a 32-byte public key and a 64-byte signature. Shared by the record path (on the event loop
// or on the verifier thread) and `ledger verify`.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { b64urlDecode } from '../core/base64url.ts';

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const CACHE_LIMIT = 10_000;
const keyObjects = new Map<string, KeyObject>();

/** A node:crypto key for a raw 32-byte public key (cached: keys never change). */
function keyObject(raw: Uint8Array): KeyObject {
  const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
  let key = keyObjects.get(id);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
    if (keyObjects.size >= CACHE_LIMIT) keyObjects.clear();
    keyObjects.set(id, key);
  }
  return key;
}

/** Whether `signature` is `publicKey`'s signature over `message`; false (never a throw) for malformed input. */
export function verifyRaw(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return verify(null, message, keyObject(publicKey), signature);
  } catch {
    return false;
  }
}

/** verifyRaw over a base64url (unpadded) key and signature. */
export function verifyEd25519(publicKeyB64url: string, message: Uint8Array, signatureB64url: string): boolean {
  const raw = b64urlDecode(publicKeyB64url);
  const sig = b64urlDecode(signatureB64url);
  return raw !== null && sig !== null && verifyRaw(raw, message, sig);
}
