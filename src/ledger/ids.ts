// Identifiers and secrets: ULID-based record ids (sortable by time), agent and key ids, link
// tokens for broker client_order_ids, and API key secrets (stored only as their SHA-256).
import { randomBytes, createHash, timingSafeEqual } from 'node:crypto';
import { incrementBase32, monotonicFactory } from 'ulid';
import type { RecordType } from '../core/chain.ts';

// A crypto call costs microseconds whatever its size (ulid's default source makes one per
// character; bench/history/write.md), so ids, link tokens and request ids draw the same
// crypto-strength randomness from a pooled buffer. API key secrets do not: they come straight
// from randomBytes.
const pool = { bytes: randomBytes(4096), at: 0 };

/** Where the next `n` (at most 4096) unused bytes of the pool start; refills it when short. */
function takeFromPool(n: number): number {
  if (pool.at + n > pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.at = 0;
  }
  const at = pool.at;
  pool.at += n;
  return at;
}

/** `n` (at most 4096) fresh random bytes, each handed out once. */
export function pooledRandomBytes(n: number): Uint8Array {
  const at = takeFromPool(n);
  return pool.bytes.subarray(at, at + n);
}

/** One random byte as a fraction, for ulid's generator: 16 of these make an id, so no view per byte. */
function pooledRandom(): number {
  const at = takeFromPool(1);
  return pool.bytes[at]! / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

export const RECORD_ID_PREFIX: Record<RecordType, string> = { decision: 'dec_', execution: 'exe_', activity: 'act_' };

/**
 * A record id: the type's prefix and a ULID that sorts after `newest` (the newest id in the
 * store), so ids follow commit order even when several processes share one database.
 */
export function recordId(type: RecordType, timeMs: number, newest: string | null = null): string {
  const candidate = nextUlid(timeMs);
  return RECORD_ID_PREFIX[type] + (newest !== null && candidate <= newest ? incrementBase32(newest) : candidate);
}

/** A record id: a type prefix and a ULID (Crockford base32). */
export const RECORD_ID_PATTERN = '^(dec|exe|act)_[0-9A-HJKMNP-TV-Z]{26}$';
const RECORD_ID = new RegExp(RECORD_ID_PATTERN);
export const isRecordId = (id: string): boolean => RECORD_ID.test(id);

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Identifiers and labels (nonces, Idempotency-Keys, key labels) never hold U+0000..U+001F or U+007F. */
export const hasControlCharacter = (s: string): boolean => CONTROL_CHARACTER.test(s);

export const agentId = (): string => 'agt_' + nextUlid();
export const apiKeyId = (): string => 'key_' + nextUlid();

/**
 * 27 characters, so `<token>-<suffix>` still fits a 32-character client_order_id budget: the
 * time in milliseconds (10 base32 characters, so tokens made one after another sort together
 * and their unique index grows at one end, not at random pages) and 70 fresh random bits.
 */
export function linkToken(nowMs = Date.now()): string {
  return 'lt_' + base32Time(nowMs) + base32(pooledRandomBytes(9)).slice(0, 14);
}

/** A request id: 96 random bits in hex. */
export function requestId(): string {
  return 'req_' + Buffer.from(pooledRandomBytes(12)).toString('hex');
}

export const API_KEY_PREFIX = 'dl_live_';

/** A new API key secret: the live-key prefix and 192 random bits. */
export function apiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(24).toString('base64url');
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function base32Time(ms: number): string {
  let out = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) out = CROCKFORD[t % 32] + out;
  return out;
}

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}
