// C2SP tlog-cosignature v1, Ed25519 (`cosignature/v1`, signature type 0x04): a witness's signature
// line added to a checkpoint note. It owns the cosigner key ID and vkey text, the signed message
// (`cosignature/v1\ntime <T>\n` + the checkpoint note text), the 76-byte line payload (key ID, u64
// big-endian T, signature), signing one and verifying one on a checkpoint note. Pure; Ed25519 is
// injected as in note.ts, so the log (asking witnesses), `ledger verify` and the browser reuse it.

import { hashesEqual, isCount, type LogResult } from './merkle.ts';
import {
  ED25519_PUBLIC_KEY_SIZE,
  ED25519_SIGNATURE_SIZE,
  encodeKeyOfType,
  encodeSignatureLine,
  isKeyName,
  KEY_ID_SIZE,
  parseKeyOfType,
  parseNote,
  type Ed25519Sign,
  type Ed25519Verify,
  type NoteSignature,
  type Vkey,
} from './note.ts';
import { sha256 } from './sha256.ts';

/** Signature type byte of Ed25519 cosignatures (`cosignature/v1`). */
export const COSIGNATURE_V1_TYPE = 0x04;
/** A cosignature line's bytes after the key ID: u64 big-endian timestamp, then the Ed25519 signature. */
export const COSIGNATURE_V1_SIGNATURE_SIZE = 8 + ED25519_SIGNATURE_SIZE;

/** A verified cosignature: who, and the cosigner's timestamp (POSIX seconds, its own clock). */
export type Cosignature = { name: string; keyId: Uint8Array; time: number };

const encoder = new TextEncoder();

function ok<T>(value: T): LogResult<T> {
  return { ok: true, value };
}

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Key ID of a cosigner key: SHA-256(name || 0x0A || 0x04 || public key)[0:4]. */
export function cosignerKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  return sha256(encoder.encode(name), new Uint8Array([0x0a, COSIGNATURE_V1_TYPE]), publicKey).slice(0, KEY_ID_SIZE);
}

/** The cosigner vkey `<name>+<8 hex key ID>+<base64(0x04 || public key)>`. */
export function encodeCosignerVkey(name: string, publicKey: Uint8Array): LogResult<string> {
  return encodeKeyOfType(name, publicKey, COSIGNATURE_V1_TYPE, cosignerKeyId);
}

/** Parses a cosigner vkey (type 0x04 only); a key ID that does not match the name and key is refused. */
export function parseCosignerVkey(text: string): LogResult<Vkey> {
  return parseKeyOfType(text, COSIGNATURE_V1_TYPE, cosignerKeyId, 'not a cosignature/v1 key (type 0x04)');
}

/** Valid cosignature times: POSIX seconds, non-zero (tlog-witness forbids 0), within JS's exact integers. */
function isCosignatureTime(time: number): boolean {
  return isCount(time) && time > 0;
}

/**
 * The signed message: `cosignature/v1\n`, `time <T>\n`, then the checkpoint note text (every line
 * with its newline, extension lines included; not the blank line, not the signatures).
 */
export function cosignatureMessage(noteText: string, time: number): LogResult<Uint8Array> {
  if (!isCosignatureTime(time)) return fail('cosignature time must be a positive integer of seconds');
  if (typeof noteText !== 'string' || noteText.length === 0 || !noteText.endsWith('\n')) {
    return fail('checkpoint text must end with a newline');
  }
  return ok(encoder.encode(`cosignature/v1\ntime ${time}\n${noteText}`));
}

function u64be(n: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

/** Cosigns a checkpoint's note text at `time`; returns the signature line (`— <name> <base64>\n`). */
export function signCosignature(
  noteText: string,
  time: number,
  key: { name: string; publicKey: Uint8Array },
  sign: Ed25519Sign,
): LogResult<string> {
  if (!isKeyName(key.name)) return fail('invalid key name');
  if (key.publicKey.length !== ED25519_PUBLIC_KEY_SIZE) return fail('an Ed25519 public key is 32 bytes');
  const message = cosignatureMessage(noteText, time);
  if (!message.ok) return message;
  const signature = sign(message.value);
  if (signature.length !== ED25519_SIGNATURE_SIZE) return fail('the signer did not return a 64-byte signature');
  const payload = new Uint8Array(COSIGNATURE_V1_SIGNATURE_SIZE);
  payload.set(u64be(time), 0);
  payload.set(signature, 8);
  return ok(encodeSignatureLine({ name: key.name, keyId: cosignerKeyId(key.name, key.publicKey), signature: payload }));
}

/** Checks one signature (already matched to `vkey` by name and key ID) as a cosignature over noteText. */
export function checkCosignature(noteText: string, sig: NoteSignature, vkey: Vkey, verify: Ed25519Verify): LogResult<Cosignature> {
  if (sig.signature.length !== COSIGNATURE_V1_SIGNATURE_SIZE) return fail(`cosignature by ${vkey.name} is not 72 bytes`);
  const big = new DataView(sig.signature.buffer, sig.signature.byteOffset, 8).getBigUint64(0);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) return fail(`cosignature by ${vkey.name} has an impossible time`);
  const time = Number(big);
  const message = cosignatureMessage(noteText, time);
  if (!message.ok) return fail(`cosignature by ${vkey.name}: ${message.error}`);
  if (!verify(vkey.publicKey, message.value, sig.signature.subarray(8))) return fail(`cosignature by ${vkey.name} does not verify`);
  return ok({ name: vkey.name, keyId: vkey.keyId, time });
}

/**
 * Verifies the cosignature of one cosigner (a 0x04 vkey) on a signed checkpoint note: lines with
 * that name and key ID are checked (one failing rejects), other lines are ignored, and the cosigner
 * must have signed. The log's own signature is not checked here (openCheckpoint does that).
 */
export function verifyCosignature(input: string | Uint8Array, vkey: Vkey, verify: Ed25519Verify): LogResult<Cosignature> {
  const note = parseNote(input);
  if (!note.ok) return note;
  const mine = note.value.signatures.filter((s) => s.name === vkey.name && hashesEqual(s.keyId, vkey.keyId));
  if (mine.length === 0) return fail(`checkpoint is not cosigned by ${vkey.name}+${hex(vkey.keyId)}`);
  let result: LogResult<Cosignature> = fail('unreachable');
  for (const sig of mine) {
    result = checkCosignature(note.value.text, sig, vkey, verify);
    if (!result.ok) return result;
  }
  return result;
}
