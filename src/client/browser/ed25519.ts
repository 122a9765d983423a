// The browser's replacement for src/core/ed25519.ts (package.json `browser` maps one onto the
// other in a browser bundle): the same checks over @noble/ed25519, synchronous as the core needs
// them, with RFC 8032's strict rules (not ZIP 215) so a browser accepts exactly the signatures
// node:crypto (OpenSSL) accepts on the service.
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { b64urlDecode } from '../../core/base64url.ts';

ed.hashes.sha512 = sha512;

/** Whether `signature` is `publicKey`'s signature over `message`; false (never a throw) for malformed input. */
export function verifyRaw(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
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
