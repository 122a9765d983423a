// SHA-256 for canon_v1 and log_v1 hashes. The single platform seam of src/core: the only file that imports
// from node:. A browser build swaps this file for one backed by a JS or WebCrypto implementation.

import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256; strings are hashed as UTF-8. */
export function sha256Hex(data: string | Uint8Array): string {
  const h = createHash('sha256');
  if (typeof data === 'string') h.update(data, 'utf8');
  else h.update(data);
  return h.digest('hex');
}

/** Raw SHA-256 digest; strings are hashed as UTF-8. Several inputs are hashed as their concatenation. */
export function sha256(...parts: (string | Uint8Array)[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) {
    if (typeof p === 'string') h.update(p, 'utf8');
    else h.update(p);
  }
  return Uint8Array.from(h.digest());
}
