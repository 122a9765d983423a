// The browser's replacement for src/core/sha256.ts (package.json `browser` maps one onto the
// other in a browser bundle): the same two functions over @noble/hashes, synchronous as the core
// needs them (WebCrypto's digest is async only).
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const encoder = new TextEncoder();
const bytesOf = (data: string | Uint8Array) => (typeof data === 'string' ? encoder.encode(data) : data);

/** Lowercase hex SHA-256; strings are hashed as UTF-8. */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(nobleSha256(bytesOf(data)));
}

/** Raw SHA-256 digest; strings are hashed as UTF-8. Several inputs are hashed as their concatenation. */
export function sha256(...parts: (string | Uint8Array)[]): Uint8Array {
  const h = nobleSha256.create();
  for (const p of parts) h.update(bytesOf(p));
  return h.digest();
}
