// Strict base64url (RFC 4648 §5) without padding, for Ed25519 keys and signatures.
// It owns the one accepted spelling of bytes as text: no padding, no other alphabet, no
// non-zero trailing bits, so each byte string has exactly one encoding.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

function sextet(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c < 128 ? (DECODE[c] as number) : -1;
}

export function b64urlEncode(bytes: Uint8Array): string {
  let out = '';
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[v >> 18]! + ALPHABET[(v >> 12) & 63]! + ALPHABET[(v >> 6) & 63]! + ALPHABET[v & 63]!;
  }
  const rest = n - i;
  if (rest === 1) {
    const v = bytes[i] as number;
    out += ALPHABET[v >> 2]! + ALPHABET[(v & 3) << 4]!;
  } else if (rest === 2) {
    const v = ((bytes[i] as number) << 8) | (bytes[i + 1] as number);
    out += ALPHABET[v >> 10]! + ALPHABET[(v >> 4) & 63]! + ALPHABET[(v & 15) << 2]!;
  }
  return out;
}

/** Decodes strict unpadded base64url; null for any other spelling. */
export function b64urlDecode(s: string): Uint8Array | null {
  if (typeof s !== 'string') return null;
  const n = s.length;
  const rest = n % 4;
  if (rest === 1) return null;
  const out = new Uint8Array(Math.floor(n / 4) * 3 + (rest === 0 ? 0 : rest - 1));
  let o = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const a = sextet(s, i);
    const b = sextet(s, i + 1);
    const c = sextet(s, i + 2);
    const d = sextet(s, i + 3);
    if ((a | b | c | d) < 0) return null;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = v >> 16;
    out[o++] = (v >> 8) & 255;
    out[o++] = v & 255;
  }
  if (rest === 2) {
    const a = sextet(s, i);
    const b = sextet(s, i + 1);
    if ((a | b) < 0 || (b & 15) !== 0) return null;
    out[o++] = (a << 2) | (b >> 4);
  } else if (rest === 3) {
    const a = sextet(s, i);
    const b = sextet(s, i + 1);
    const c = sextet(s, i + 2);
    if ((a | b | c) < 0 || (c & 3) !== 0) return null;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 15) << 4) | (c >> 2);
  }
  return out;
}
