// C2SP signed notes with Ed25519 signatures, verifier keys (vkeys) and the log_v1 checkpoint
// (C2SP tlog-checkpoint, log_v1 §2). It owns the exact text of a checkpoint, of its signature lines
// and of the log's vkey, strict parsing of all three, and signing / verifying them. The Ed25519
// maths is injected (Ed25519Verify / Ed25519Sign) so this runs unchanged in a browser.

import { b64Decode, b64Encode } from './base64.ts';
import { HASH_SIZE, hashesEqual, isCount, type Hash, type LogResult } from './merkle.ts';
import { sha256 } from './sha256.ts';

/** Checks an Ed25519 signature over message under a raw 32-byte public key. */
export type Ed25519Verify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/** Signs message with the log's Ed25519 private key, which stays with the caller; returns the 64-byte signature. */
export type Ed25519Sign = (message: Uint8Array) => Uint8Array;

/** Signature type byte of Ed25519 note signatures. */
export const ED25519_NOTE_TYPE = 0x01;
export const KEY_ID_SIZE = 4;
export const ED25519_PUBLIC_KEY_SIZE = 32;
export const ED25519_SIGNATURE_SIZE = 64;
/** The signed-note spec asks verifiers to accept at least 16 signatures; more than this is refused. */
export const MAX_NOTE_SIGNATURES = 64;

export const SIGNATURE_LINE_PREFIX = '\u2014 '; // em dash, space

export type Vkey = { name: string; keyId: Uint8Array; publicKey: Uint8Array };

/** One signature line: key name, 4-byte key ID and the signature bytes after it. */
export type NoteSignature = { name: string; keyId: Uint8Array; signature: Uint8Array };

/** A parsed note: its text (with the final newline, without the blank separator line) and signatures. */
export type Note = { text: string; signatures: NoteSignature[] };

/** The log_v1 checkpoint body: origin, tree size, root hash. */
export type Checkpoint = { origin: string; size: number; root: Hash };

function ok<T>(value: T): LogResult<T> {
  return { ok: true, value };
}

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Unicode White_Space (Go's unicode.IsSpace), which key names must not contain.
const UNICODE_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
const CONTROL_EXCEPT_NEWLINE = /[\x00-\x09\x0b-\x1f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/** Note text as a JS string, from bytes (strict UTF-8) or a string (no lone surrogates), control characters refused. */
function noteString(input: string | Uint8Array): LogResult<string> {
  let s: string;
  if (typeof input === 'string') {
    if (LONE_SURROGATE.test(input)) return fail('note is not valid Unicode');
    s = input;
  } else {
    try {
      s = strictDecoder.decode(input);
    } catch {
      return fail('note is not valid UTF-8');
    }
  }
  if (CONTROL_EXCEPT_NEWLINE.test(s)) return fail('note holds a control character');
  return ok(s);
}

/** Key names (and so log_v1 origins): non-empty, no Unicode space, no +, no control character. */
export function isKeyName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    !UNICODE_SPACE.test(name) &&
    !name.includes('+') &&
    !CONTROL_EXCEPT_NEWLINE.test(name) &&
    !LONE_SURROGATE.test(name)
  );
}

/** Parses a decimal with no leading zeros into a safe integer. */
export function parseDecimalCount(text: string): number | null {
  if (!DECIMAL.test(text)) return null;
  const n = Number(text);
  return isCount(n) ? n : null;
}

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Key ID of an Ed25519 note key: SHA-256(name || 0x0A || 0x01 || public key)[0:4]. */
export function noteKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  return sha256(encoder.encode(name), new Uint8Array([0x0a, ED25519_NOTE_TYPE]), publicKey).slice(0, KEY_ID_SIZE);
}

/** The vkey text `<name>+<8 hex digits of key ID>+<base64(0x01 || public key)>`. */
export function encodeVkey(name: string, publicKey: Uint8Array): LogResult<string> {
  return encodeKeyOfType(name, publicKey, ED25519_NOTE_TYPE, noteKeyId);
}

/** Parses an Ed25519 vkey; any other signature type, a key ID that does not match, or a stray byte is refused. */
export function parseVkey(text: string): LogResult<Vkey> {
  return parseKeyOfType(text, ED25519_NOTE_TYPE, noteKeyId, 'unknown key type (only Ed25519, 0x01)');
}

type KeyIdOf = (name: string, publicKey: Uint8Array) => Uint8Array;

/**
 * A vkey `<name>+<8 hex key ID>+<base64(type || Ed25519 public key)>` of one signature type: a note
 * signer's (0x01) or a cosigner's (0x04, core/cosignature.ts), each with its own key ID rule.
 */
export function encodeKeyOfType(name: string, publicKey: Uint8Array, type: number, keyIdOf: KeyIdOf): LogResult<string> {
  if (!isKeyName(name)) return fail('invalid key name');
  if (publicKey.length !== ED25519_PUBLIC_KEY_SIZE) return fail('an Ed25519 public key is 32 bytes');
  return ok(`${name}+${hex(keyIdOf(name, publicKey))}+${b64Encode(concat(new Uint8Array([type]), publicKey))}`);
}

/** Parses a vkey of `type`; another type (`wrongType` says so), a key ID that does not match, or a stray byte is refused. */
export function parseKeyOfType(text: string, type: number, keyIdOf: KeyIdOf, wrongType: string): LogResult<Vkey> {
  if (typeof text !== 'string') return fail('vkey must be a string');
  // Names hold no '+', and the ID is hex: the first two '+' split the parts (base64 may hold '+').
  const first = text.indexOf('+');
  const second = text.indexOf('+', first + 1);
  if (first < 0 || second < 0) return fail('a vkey is name+keyid+key');
  const [name, idHex, keyB64] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  if (!isKeyName(name)) return fail('invalid key name');
  if (!/^[0-9a-f]{8}$/.test(idHex)) return fail('key ID must be 8 lowercase hex digits');
  const material = b64Decode(keyB64);
  if (!material) return fail('key is not strict base64');
  if (material[0] !== type) return fail(wrongType);
  if (material.length !== 1 + ED25519_PUBLIC_KEY_SIZE) return fail('an Ed25519 public key is 32 bytes');
  const publicKey = material.slice(1);
  const keyId = keyIdOf(name, publicKey);
  if (hex(keyId) !== idHex) return fail('key ID does not match the name and key');
  return ok({ name, keyId, publicKey });
}

export function encodeSignatureLine(sig: NoteSignature): string {
  return `${SIGNATURE_LINE_PREFIX}${sig.name} ${b64Encode(concat(sig.keyId, sig.signature))}\n`;
}

function parseSignatureLine(line: string): LogResult<NoteSignature> {
  if (!line.startsWith(SIGNATURE_LINE_PREFIX)) return fail('signature line does not start with an em dash and a space');
  const rest = line.slice(SIGNATURE_LINE_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space < 0) return fail('signature line has no signature');
  const name = rest.slice(0, space);
  if (!isKeyName(name)) return fail('signature line has an invalid key name');
  const bytes = b64Decode(rest.slice(space + 1));
  if (!bytes) return fail('signature is not strict base64');
  if (bytes.length < KEY_ID_SIZE + 1) return fail('signature is too short');
  return ok({ name, keyId: bytes.slice(0, KEY_ID_SIZE), signature: bytes.slice(KEY_ID_SIZE) });
}

/**
 * Parses a signed note: text, the last blank line, then one or more signature lines, every line
 * ending in a newline and nothing after. Two signatures with the same key name and ID are refused.
 */
export function parseNote(input: string | Uint8Array): LogResult<Note> {
  const s = noteString(input);
  if (!s.ok) return s;
  const note = s.value;
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return fail('note has no blank line before its signatures');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block.length === 0) return fail('note has no signature');
  if (!block.endsWith('\n')) return fail('note does not end with a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES) return fail(`note has more than ${MAX_NOTE_SIGNATURES} signatures`);
  const signatures: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    const sig = parseSignatureLine(line);
    if (!sig.ok) return sig;
    const key = `${sig.value.name}+${hex(sig.value.keyId)}`;
    if (seen.has(key)) return fail(`two signatures by ${key}`);
    seen.add(key);
    signatures.push(sig.value);
  }
  return ok({ text, signatures });
}

/**
 * Verifies a note under one Ed25519 vkey, as the signed-note spec says: signatures by other keys
 * are ignored, a failing signature by this key rejects the note, and the key must have signed.
 */
export function verifyNote(input: string | Uint8Array, vkey: Vkey, verify: Ed25519Verify): LogResult<Note> {
  const parsed = parseNote(input);
  if (!parsed.ok) return parsed;
  const note = parsed.value;
  const mine = note.signatures.filter((s) => s.name === vkey.name && hashesEqual(s.keyId, vkey.keyId));
  if (mine.length === 0) return fail(`note is not signed by ${vkey.name}+${hex(vkey.keyId)}`);
  const message = encoder.encode(note.text);
  for (const sig of mine) {
    if (sig.signature.length !== ED25519_SIGNATURE_SIZE || !verify(vkey.publicKey, message, sig.signature)) {
      return fail(`signature by ${vkey.name} does not verify`);
    }
  }
  return ok(note);
}

/** Signs note text (non-empty, ending in a newline) and returns the signed note with one signature line. */
export function signNote(
  text: string,
  key: { name: string; publicKey: Uint8Array },
  sign: Ed25519Sign,
): LogResult<string> {
  const s = noteString(text);
  if (!s.ok) return s;
  if (text.length === 0 || !text.endsWith('\n')) return fail('note text must end with a newline');
  if (!isKeyName(key.name)) return fail('invalid key name');
  if (key.publicKey.length !== ED25519_PUBLIC_KEY_SIZE) return fail('an Ed25519 public key is 32 bytes');
  const signature = sign(encoder.encode(text));
  if (signature.length !== ED25519_SIGNATURE_SIZE) return fail('the signer did not return a 64-byte signature');
  const line = encodeSignatureLine({ name: key.name, keyId: noteKeyId(key.name, key.publicKey), signature });
  return ok(`${text}\n${line}`);
}

// ---- log_v1 checkpoints ----

/** The checkpoint body of log_v1 §2: origin, size, base64 root, each line ending in a newline. */
export function encodeCheckpointBody(cp: Checkpoint): LogResult<string> {
  if (!isKeyName(cp.origin)) return fail('origin must be a valid key name (it is the log key name)');
  if (!isCount(cp.size)) return fail('size must be a non-negative safe integer');
  if (cp.root.length !== HASH_SIZE) return fail('root is not 32 bytes');
  return ok(`${cp.origin}\n${cp.size}\n${b64Encode(cp.root)}\n`);
}

/** Parses a checkpoint body strictly: exactly the three lines, no extension lines. */
export function parseCheckpointBody(text: string): LogResult<Checkpoint> {
  if (typeof text !== 'string' || !text.endsWith('\n')) return fail('checkpoint body must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) return fail('checkpoint body has fewer than three lines');
  if (lines.length > 3) return fail('checkpoint body has extension lines (log_v1 has none)');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!isKeyName(origin)) return fail('origin must be a valid key name');
  const size = parseDecimalCount(sizeText);
  if (size === null) return fail('tree size is not a canonical decimal');
  const root = b64Decode(rootText);
  if (!root) return fail('root is not strict base64');
  if (root.length !== HASH_SIZE) return fail('root is not 32 bytes');
  return ok({ origin, size, root });
}

/**
 * The checkpoint body of a signed note (the lines before the blank line, signatures left out)
 * and its SHA-256: the digest an anchor timestamps (log_v1 §5). Null when the text has no body
 * of three lines with a decimal tree size.
 */
export function checkpointBodyDigest(note: string): { body: string; digest: Uint8Array; root: string; treeSize: number } | null {
  const end = note.indexOf('\n\n');
  if (end < 0) return null;
  const body = note.slice(0, end + 1);
  const lines = body.split('\n');
  if (lines.length !== 4 || !/^[0-9]+$/.test(lines[1]!)) return null;
  return { body, digest: sha256(body), root: lines[2]!, treeSize: Number(lines[1]) };
}

/** Signs a checkpoint with the log's key, whose name is the origin (log_v1 §2). */
export function signCheckpoint(cp: Checkpoint, publicKey: Uint8Array, sign: Ed25519Sign): LogResult<string> {
  const body = encodeCheckpointBody(cp);
  if (!body.ok) return body;
  return signNote(body.value, { name: cp.origin, publicKey }, sign);
}

/**
 * Opens a signed checkpoint: the log's signature verifies under vkey, the body is a strict log_v1
 * body, and its origin is the vkey's name. Other signatures (witness cosignatures) are ignored.
 */
export function openCheckpoint(
  input: string | Uint8Array,
  vkey: Vkey,
  verify: Ed25519Verify,
): LogResult<{ checkpoint: Checkpoint; note: Note }> {
  const note = verifyNote(input, vkey, verify);
  if (!note.ok) return note;
  const checkpoint = parseCheckpointBody(note.value.text);
  if (!checkpoint.ok) return checkpoint;
  if (checkpoint.value.origin !== vkey.name) return fail('checkpoint origin is not the log key name');
  return ok({ checkpoint: checkpoint.value, note: note.value });
}
