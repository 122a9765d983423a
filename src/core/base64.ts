// Strict standard base64 (RFC 4648 §4) with padding, the spelling of hashes and signatures in
// C2SP signed notes, checkpoints and tlog-proof. It owns one accepted text per byte string (padding
// required, no whitespace, no non-zero trailing bits), by way of the strict base64url codec.

import { b64urlDecode, b64urlEncode } from './base64url.ts';

const STANDARD = /^[A-Za-z0-9+/]*$/;

export function b64Encode(bytes: Uint8Array): string {
  const body = b64urlEncode(bytes).replace(/-/g, '+').replace(/_/g, '/');
  return body + '='.repeat((4 - (body.length % 4)) % 4);
}

/** Decodes strict padded standard base64; null for any other spelling. */
export function b64Decode(s: string): Uint8Array | null {
  if (typeof s !== 'string' || s.length % 4 !== 0) return null;
  const body = s.replace(/={1,2}$/, '');
  if (!STANDARD.test(body) || body.length % 4 === 1) return null;
  return b64urlDecode(body.replace(/\+/g, '-').replace(/\//g, '_'));
}
