// The browser build's SHA-256 seam: replaces src/core/sha256.ts (node:crypto) in the bundle
// scripts/build.mjs makes, with the same exports, backed by @noble/hashes (synchronous, as the
// core needs; the page cross-checks the record's two hashes with WebCrypto where it can).
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const encoder = new TextEncoder();
const bytes = (d: string | Uint8Array): Uint8Array => (typeof d === 'string' ? encoder.encode(d) : d);

/** Lowercase hex SHA-256; strings are hashed as UTF-8. */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(nobleSha256(bytes(data)));
}

/** Raw SHA-256 digest; strings are hashed as UTF-8. Several inputs are hashed as their concatenation. */
export function sha256(...parts: (string | Uint8Array)[]): Uint8Array {
  const h = nobleSha256.create();
  for (const p of parts) h.update(bytes(p));
  return h.digest();
}
