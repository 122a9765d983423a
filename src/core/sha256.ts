// SHA-256 for canon_v1 hashes. The single platform seam of src/core: the only file that imports
// from node:. A browser build swaps this file for one backed by a JS or WebCrypto implementation.

import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256; strings are hashed as UTF-8. */
export function sha256Hex(data: string | Uint8Array): string {
  const h = createHash('sha256');
  if (typeof data === 'string') h.update(data, 'utf8');
  else h.update(data);
  return h.digest('hex');
}
