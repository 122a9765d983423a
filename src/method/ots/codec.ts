// OpenTimestamps `.ots` codec (log_v1 §5, reference/tamper-evidence a.12; python-opentimestamps is the
// reference reader). It owns the DetachedTimestampFile and Timestamp-tree model, a strict parser
// and a serialiser that gives back the parsed bytes exactly, replaying ops to each attestation's
// message, merging trees, and building a stamp file from calendar answers. No I/O: calendars live
// in calendar.ts, block headers in bitcoin-headers.ts, verification against Bitcoin in verify.ts.

import { createHash } from 'node:crypto';

export const HEADER_MAGIC = fromHex('004f70656e54696d657374616d7073000050726f6f6600bf89e2e884e89294');
export const MAJOR_VERSION = 1;
/** Longest message an op may read or produce; also the longest append/prepend argument. */
export const MAX_MSG_LENGTH = 4096;
export const MAX_PAYLOAD_LENGTH = 8192;
export const MAX_URI_LENGTH = 1000;
/** The reference reader's recursion limit: a node this deep is an error. */
export const MAX_DEPTH = 256;

export const PENDING_TAG = fromHex('83dfe30d2ef90c8e');
export const BITCOIN_TAG = fromHex('0588960d73d71901');
/** Known to the reference but carried here as unknown attestations (kept verbatim). */
export const LITECOIN_TAG = fromHex('06869a0d73d71b45');
export const ETHEREUM_TAG = fromHex('30fe8087b5c7ead7');

export type HashOpName = 'sha1' | 'ripemd160' | 'sha256' | 'keccak256';
export type Op =
  | { kind: HashOpName }
  | { kind: 'reverse' }
  | { kind: 'hexlify' }
  | { kind: 'append'; arg: Uint8Array }
  | { kind: 'prepend'; arg: Uint8Array };

export type Attestation =
  | { kind: 'pending'; uri: string }
  | { kind: 'bitcoin'; height: number }
  /** any other tag, payload kept as read so it serialises back unchanged */
  | { kind: 'unknown'; tag: Uint8Array; payload: Uint8Array };

/** A node of the proof tree. Its message is not stored: it follows from the root message and the ops. */
export type Timestamp = { attestations: Attestation[]; ops: OpEdge[] };
export type OpEdge = { op: Op; next: Timestamp };

export type DetachedTimestampFile = { hashOp: HashOpName; digest: Uint8Array; timestamp: Timestamp };

export type OtsErrorCode =
  | 'truncated'
  | 'bad_magic'
  | 'unsupported_version'
  | 'bad_file_hash_op'
  | 'unknown_op'
  | 'bad_varuint'
  | 'bad_length'
  | 'message_too_long'
  | 'bad_message'
  | 'too_deep'
  | 'trailing_bytes'
  | 'bad_attestation'
  | 'duplicate'
  | 'non_canonical_order'
  | 'empty_timestamp'
  | 'unsupported_op'
  | 'no_answers';
export type OtsError = { code: OtsErrorCode; message: string; offset?: number };
export type Result<T, E = OtsError> = { ok: true; value: T } | { ok: false; error: E };

const DIGEST_LENGTH: Record<HashOpName, number> = { sha1: 20, ripemd160: 20, sha256: 32, keccak256: 32 };
const OP_TAG: Record<Op['kind'], number> = {
  sha1: 0x02,
  ripemd160: 0x03,
  sha256: 0x08,
  keccak256: 0x67,
  append: 0xf0,
  prepend: 0xf1,
  reverse: 0xf2,
  hexlify: 0xf3,
};
const OP_BY_TAG = new Map<number, Op['kind']>(Object.entries(OP_TAG).map(([k, t]) => [t, k as Op['kind']]));
const URI_CHARS = /^[A-Za-z0-9\-._/:]*$/;
const FORK = 0xff;
const ATTESTATION = 0x00;

// ---------------------------------------------------------------- parsing

class ParseFailure extends Error {
  constructor(readonly error: OtsError) {
    super(error.message);
  }
}

function fail(code: OtsErrorCode, message: string, offset?: number): never {
  throw new ParseFailure(offset === undefined ? { code, message } : { code, message, offset });
}

class Reader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get remaining(): number {
    return this.bytes.length - this.pos;
  }
  byte(): number {
    if (this.pos >= this.bytes.length) fail('truncated', 'unexpected end of data', this.pos);
    return this.bytes[this.pos++]!;
  }
  take(n: number): Uint8Array {
    if (n > this.remaining) fail('truncated', `needed ${n} bytes, ${this.remaining} left`, this.pos);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** Unsigned LEB128, minimal encoding only, at most 2^53 - 1. */
  varuint(): number {
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if (value > Number.MAX_SAFE_INTEGER) fail('bad_varuint', 'varuint too large', start);
      if ((b & 0x80) === 0) {
        if (b === 0 && this.pos - start > 1) fail('bad_varuint', 'varuint not minimally encoded', start);
        return value;
      }
      scale *= 128;
    }
  }
  varbytes(max: number, min = 0): Uint8Array {
    const at = this.pos;
    const n = this.varuint();
    if (n > max || n < min) fail('bad_length', `length ${n} outside ${min}..${max}`, at);
    return this.take(n);
  }
}

function errorOf(e: unknown): OtsError {
  if (e instanceof ParseFailure) return e.error;
  throw e;
}

export function parseDetachedFile(bytes: Uint8Array): Result<DetachedTimestampFile> {
  try {
    const r = new Reader(bytes);
    if (!equalBytes(r.take(HEADER_MAGIC.length), HEADER_MAGIC)) fail('bad_magic', 'not an OpenTimestamps proof (magic bytes differ)', 0);
    const version = r.varuint();
    if (version !== MAJOR_VERSION) fail('unsupported_version', `major version ${version} is not supported`, HEADER_MAGIC.length);
    const tagAt = r.pos;
    const kind = OP_BY_TAG.get(r.byte());
    if (!kind || !(kind in DIGEST_LENGTH)) fail('bad_file_hash_op', 'the file hash op must be sha1, ripemd160, sha256 or keccak256', tagAt);
    const hashOp = kind as HashOpName;
    const digest = r.take(DIGEST_LENGTH[hashOp]);
    const timestamp = readTimestamp(r, digest.length, 0);
    if (r.remaining > 0) fail('trailing_bytes', `${r.remaining} bytes after the end of the proof`, r.pos);
    return { ok: true, value: { hashOp, digest, timestamp } };
  } catch (e) {
    return { ok: false, error: errorOf(e) };
  }
}

/** A bare timestamp, as a calendar answers: rooted at a message of `messageLength` bytes, no header. */
export function parseTimestamp(bytes: Uint8Array, messageLength: number): Result<Timestamp> {
  try {
    const r = new Reader(bytes);
    const timestamp = readTimestamp(r, messageLength, 0);
    if (r.remaining > 0) fail('trailing_bytes', `${r.remaining} bytes after the end of the timestamp`, r.pos);
    return { ok: true, value: timestamp };
  } catch (e) {
    return { ok: false, error: errorOf(e) };
  }
}

function readTimestamp(r: Reader, msgLength: number, depth: number): Timestamp {
  if (depth >= MAX_DEPTH) fail('too_deep', `timestamp nested deeper than ${MAX_DEPTH} levels`, r.pos);
  const node: Timestamp = { attestations: [], ops: [] };
  const seen = new Set<string>();
  for (;;) {
    let tag = r.byte();
    const fork = tag === FORK;
    if (fork) tag = r.byte();
    const at = r.pos - 1;
    if (tag === ATTESTATION) {
      if (node.ops.length > 0) fail('non_canonical_order', 'an attestation follows an op in the same node', at);
      addOnce(seen, node.attestations, readAttestation(r), at);
    } else {
      const op = readOp(r, tag, at);
      const next = readTimestamp(r, resultLength(op, msgLength, at), depth + 1);
      addOnce(seen, node.ops, { op, next }, at);
    }
    if (!fork) return node;
  }
}

function addOnce<T extends Attestation | OpEdge>(seen: Set<string>, list: T[], item: T, at: number): void {
  const key = 'op' in item ? `op:${toHex(opBytes(item.op))}` : `at:${toHex(attestationBytes(item))}`;
  if (seen.has(key)) fail('duplicate', 'the same op or attestation appears twice in one node', at);
  seen.add(key);
  list.push(item);
}

function readOp(r: Reader, tag: number, at: number): Op {
  const kind = OP_BY_TAG.get(tag);
  if (!kind) fail('unknown_op', `unknown op tag 0x${tag.toString(16).padStart(2, '0')}`, at);
  if (kind === 'append' || kind === 'prepend') return { kind, arg: r.varbytes(MAX_MSG_LENGTH, 1) };
  return { kind };
}

/** Length of an op's result on a message of `msgLength` bytes, with the reference's limits. */
function resultLength(op: Op, msgLength: number, at: number): number {
  const n = opResultLength(op, msgLength);
  if (!n.ok) fail(n.error.code, n.error.message, at);
  return n.value;
}

function opResultLength(op: Op, msgLength: number): Result<number> {
  if (msgLength > MAX_MSG_LENGTH) return err('message_too_long', `message of ${msgLength} bytes exceeds ${MAX_MSG_LENGTH}`);
  let n: number;
  switch (op.kind) {
    case 'append':
    case 'prepend':
      n = msgLength + op.arg.length;
      break;
    case 'reverse':
      if (msgLength === 0) return err('bad_message', 'cannot reverse an empty message');
      n = msgLength;
      break;
    case 'hexlify':
      if (msgLength === 0) return err('bad_message', 'cannot hexlify an empty message');
      if (msgLength > MAX_MSG_LENGTH / 2) return err('message_too_long', `hexlify of ${msgLength} bytes exceeds ${MAX_MSG_LENGTH}`);
      n = msgLength * 2;
      break;
    default:
      n = DIGEST_LENGTH[op.kind];
  }
  if (n > MAX_MSG_LENGTH) return err('message_too_long', `result of ${n} bytes exceeds ${MAX_MSG_LENGTH}`);
  return { ok: true, value: n };
}

function readAttestation(r: Reader): Attestation {
  const tag = r.take(8);
  const at = r.pos;
  const payload = r.varbytes(MAX_PAYLOAD_LENGTH);
  if (equalBytes(tag, PENDING_TAG)) {
    const p = new Reader(payload);
    const uri = p.varbytes(MAX_URI_LENGTH);
    if (p.remaining > 0) fail('bad_attestation', 'pending attestation payload has bytes after the URI', at);
    const text = String.fromCharCode(...uri);
    if (!URI_CHARS.test(text)) fail('bad_attestation', 'pending attestation URI has characters outside A-Z a-z 0-9 - . _ / :', at);
    return { kind: 'pending', uri: text };
  }
  if (equalBytes(tag, BITCOIN_TAG)) {
    const p = new Reader(payload);
    const height = p.varuint();
    if (p.remaining > 0) fail('bad_attestation', 'bitcoin attestation payload has bytes after the height', at);
    return { kind: 'bitcoin', height };
  }
  return { kind: 'unknown', tag, payload };
}

// ---------------------------------------------------------------- serialising

class Writer {
  private parts: Uint8Array[] = [];
  bytes(b: Uint8Array | number[]): void {
    this.parts.push(b instanceof Uint8Array ? b : Uint8Array.from(b));
  }
  varuint(n: number): void {
    this.bytes(encodeVaruint(n));
  }
  varbytes(b: Uint8Array): void {
    this.varuint(b.length);
    this.bytes(b);
  }
  result(): Uint8Array {
    return concatBytes(...this.parts);
  }
}

export function encodeVaruint(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`varuint out of range: ${n}`);
  const out: number[] = [];
  do {
    const low = n % 128;
    n = Math.floor(n / 128);
    out.push(n > 0 ? low | 0x80 : low);
  } while (n > 0);
  return Uint8Array.from(out);
}

export function serializeDetachedFile(file: DetachedTimestampFile): Result<Uint8Array> {
  if (file.digest.length !== DIGEST_LENGTH[file.hashOp]) {
    return err('bad_length', `a ${file.hashOp} digest is ${DIGEST_LENGTH[file.hashOp]} bytes, not ${file.digest.length}`);
  }
  const w = new Writer();
  w.bytes(HEADER_MAGIC);
  w.varuint(MAJOR_VERSION);
  w.bytes([OP_TAG[file.hashOp]]);
  w.bytes(file.digest);
  const body = serializeTimestamp(file.timestamp);
  if (!body.ok) return body;
  w.bytes(body.value);
  return { ok: true, value: w.result() };
}

/** Serialises in the model's order (attestations, then ops), which is the parsed order for parsed input. */
export function serializeTimestamp(ts: Timestamp): Result<Uint8Array> {
  try {
    const w = new Writer();
    writeTimestamp(w, ts, 0);
    return { ok: true, value: w.result() };
  } catch (e) {
    return { ok: false, error: errorOf(e) };
  }
}

function writeTimestamp(w: Writer, ts: Timestamp, depth: number): void {
  if (depth >= MAX_DEPTH) fail('too_deep', `timestamp nested deeper than ${MAX_DEPTH} levels`);
  const items = ts.attestations.length + ts.ops.length;
  if (items === 0) fail('empty_timestamp', 'a node without attestations or ops cannot be serialised');
  let i = 0;
  for (const a of ts.attestations) {
    checkAttestation(a);
    if (++i < items) w.bytes([FORK]);
    w.bytes([ATTESTATION]);
    w.bytes(attestationBytes(a));
  }
  for (const edge of ts.ops) {
    if ('arg' in edge.op && (edge.op.arg.length < 1 || edge.op.arg.length > MAX_MSG_LENGTH)) fail('bad_length', `${edge.op.kind} argument must be 1 to ${MAX_MSG_LENGTH} bytes`);
    if (++i < items) w.bytes([FORK]);
    w.bytes(opBytes(edge.op));
    writeTimestamp(w, edge.next, depth + 1);
  }
}

/** A model built in code must still be one the parser would accept. */
function checkAttestation(a: Attestation): void {
  if (a.kind === 'pending' && (a.uri.length > MAX_URI_LENGTH || !URI_CHARS.test(a.uri))) fail('bad_attestation', 'pending attestation URI is too long or has characters outside A-Z a-z 0-9 - . _ / :');
  if (a.kind === 'bitcoin' && !(Number.isSafeInteger(a.height) && a.height >= 0)) fail('bad_attestation', 'block height must be a non-negative integer');
  if (a.kind === 'unknown' && (a.tag.length !== 8 || a.payload.length > MAX_PAYLOAD_LENGTH)) fail('bad_attestation', 'attestation tag must be 8 bytes and its payload at most 8192');
}

function opBytes(op: Op): Uint8Array {
  if (op.kind === 'append' || op.kind === 'prepend') return concatBytes(Uint8Array.of(OP_TAG[op.kind]), encodeVaruint(op.arg.length), op.arg);
  return Uint8Array.of(OP_TAG[op.kind]);
}

/** Tag and varbytes(payload): the bytes after the 0x00 marker. */
function attestationBytes(a: Attestation): Uint8Array {
  const [tag, payload] = attestationParts(a);
  return concatBytes(tag, encodeVaruint(payload.length), payload);
}

function attestationParts(a: Attestation): [Uint8Array, Uint8Array] {
  switch (a.kind) {
    case 'pending': {
      const uri = Uint8Array.from(a.uri, (c) => c.charCodeAt(0));
      return [PENDING_TAG, concatBytes(encodeVaruint(uri.length), uri)];
    }
    case 'bitcoin':
      return [BITCOIN_TAG, encodeVaruint(a.height)];
    case 'unknown':
      return [a.tag, a.payload];
  }
}

// ---------------------------------------------------------------- replaying ops

let keccak: ((m: Uint8Array) => Uint8Array) | null | undefined;

/** node:crypto has Keccak-256 only with OpenSSL >= 3.2; without it keccak256 ops cannot be replayed. */
function keccak256(): ((m: Uint8Array) => Uint8Array) | null {
  if (keccak === undefined) {
    try {
      createHash('KECCAK-256');
      keccak = (m) => new Uint8Array(createHash('KECCAK-256').update(m).digest());
    } catch {
      keccak = null;
    }
  }
  return keccak;
}

export function applyOp(op: Op, msg: Uint8Array): Result<Uint8Array> {
  const length = opResultLength(op, msg.length);
  if (!length.ok) return length;
  switch (op.kind) {
    case 'append':
      return { ok: true, value: concatBytes(msg, op.arg) };
    case 'prepend':
      return { ok: true, value: concatBytes(op.arg, msg) };
    case 'reverse':
      return { ok: true, value: msg.slice().reverse() };
    case 'hexlify':
      return { ok: true, value: new TextEncoder().encode(toHex(msg)) };
    case 'keccak256': {
      const k = keccak256();
      if (!k) return err('unsupported_op', 'keccak256 is not available in this runtime (needs OpenSSL 3.2 or later)');
      return { ok: true, value: k(msg) };
    }
    default:
      return { ok: true, value: new Uint8Array(createHash(op.kind).update(msg).digest()) };
  }
}

export type AttestedMessage = { attestation: Attestation; message: Uint8Array; path: Op[] };
/** A branch whose ops cannot be replayed here (keccak256 without runtime support, or a bad model). */
export type SkippedBranch = { path: Op[]; error: OtsError };
export type Replay = { attested: AttestedMessage[]; skipped: SkippedBranch[] };

/**
 * Every attestation in the tree with the message it attests, replayed from the root message. A branch
 * that cannot be replayed is listed in `skipped` and does not hide the others.
 */
export function attestedMessages(ts: Timestamp, rootMessage: Uint8Array): Replay {
  const out: Replay = { attested: [], skipped: [] };
  const walk = (node: Timestamp, msg: Uint8Array, path: Op[]): void => {
    for (const attestation of node.attestations) out.attested.push({ attestation, message: msg, path });
    for (const { op, next } of node.ops) {
      const result = applyOp(op, msg);
      if (result.ok) walk(next, result.value, [...path, op]);
      else out.skipped.push({ path: [...path, op], error: result.error });
    }
  };
  walk(ts, rootMessage, []);
  return out;
}

export type PendingCalendar = { uri: string; commitment: Uint8Array };

/** The calendars a timestamp still waits on, each with the commitment to ask it about. */
export function pendingCalendars(ts: Timestamp, rootMessage: Uint8Array): PendingCalendar[] {
  const out: PendingCalendar[] = [];
  for (const { attestation, message } of attestedMessages(ts, rootMessage).attested) {
    if (attestation.kind === 'pending') out.push({ uri: attestation.uri, commitment: message });
  }
  return out;
}

// ---------------------------------------------------------------- building and merging

/**
 * Union of two trees rooted at the same message (the caller's promise: the model does not carry
 * messages). Attestations and ops come out in the reference writer's order, so merging is stable.
 */
export function mergeTimestamps(a: Timestamp, b: Timestamp): Timestamp {
  const attestations = [...a.attestations];
  for (const x of b.attestations) {
    if (!attestations.some((y) => compareAttestations(x, y) === 0)) attestations.push(x);
  }
  const ops: OpEdge[] = a.ops.map((e) => ({ op: e.op, next: e.next }));
  for (const edge of b.ops) {
    const i = ops.findIndex((e) => compareOps(e.op, edge.op) === 0);
    if (i >= 0) ops[i] = { op: edge.op, next: mergeTimestamps(ops[i]!.next, edge.next) };
    else ops.push(edge);
  }
  return { attestations: attestations.sort(compareAttestations), ops: ops.sort((x, y) => compareOps(x.op, y.op)) };
}

/**
 * Merges `addition` into every node whose message is `commitment` (an upgrade answered by a calendar).
 * Branches that cannot be replayed are kept as they are.
 */
export function mergeAt(ts: Timestamp, rootMessage: Uint8Array, commitment: Uint8Array, addition: Timestamp): { timestamp: Timestamp; merged: number } {
  let merged = 0;
  const walk = (node: Timestamp, msg: Uint8Array): Timestamp => {
    const ops = node.ops.map(({ op, next }) => {
      const result = applyOp(op, msg);
      return { op, next: result.ok ? walk(next, result.value) : next };
    });
    const rebuilt = { attestations: node.attestations, ops };
    if (!equalBytes(msg, commitment)) return rebuilt;
    merged++;
    return mergeTimestamps(rebuilt, addition);
  };
  const timestamp = walk(ts, rootMessage);
  return { timestamp, merged };
}

/** A straight path of ops ending in `leaf` (an attestation, or a subtree to continue with). */
export function timestampFromOps(ops: Op[], leaf: Attestation | Timestamp): Timestamp {
  let node: Timestamp = 'kind' in leaf ? { attestations: [leaf], ops: [] } : leaf;
  for (let i = ops.length - 1; i >= 0; i--) node = { attestations: [], ops: [{ op: ops[i]!, next: node }] };
  return node;
}

/** What the client sends calendars for a digest: SHA-256(digest ‖ nonce), so calendars never see the digest. */
export function submittedMessage(digest: Uint8Array, nonce: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(digest).update(nonce).digest());
}

/**
 * The `.ots` file for a SHA-256 digest from calendar answers, each a timestamp rooted at
 * submittedMessage(digest, nonce). Answers are merged, so two calendars give two branches.
 */
export function buildDetachedFile(digest: Uint8Array, nonce: Uint8Array, answers: Timestamp[]): Result<DetachedTimestampFile> {
  if (digest.length !== 32) return err('bad_length', `a SHA-256 digest is 32 bytes, not ${digest.length}`);
  if (nonce.length < 1 || nonce.length > MAX_MSG_LENGTH - 32) return err('bad_length', 'the nonce must be 1 to 4064 bytes');
  if (answers.length === 0) return err('no_answers', 'no calendar answer to build a timestamp from');
  const merged = answers.slice(1).reduce(mergeTimestamps, answers[0]!);
  const timestamp = timestampFromOps([{ kind: 'append', arg: nonce }, { kind: 'sha256' }], merged);
  return { ok: true, value: { hashOp: 'sha256', digest, timestamp } };
}

// ---------------------------------------------------------------- ordering (the reference writer's)

export function compareOps(a: Op, b: Op): number {
  const byTag = OP_TAG[a.kind] - OP_TAG[b.kind];
  if (byTag !== 0) return byTag;
  return 'arg' in a && 'arg' in b ? compareBytes(a.arg, b.arg) : 0;
}

export function compareAttestations(a: Attestation, b: Attestation): number {
  const [tagA, payloadA] = attestationParts(a);
  const [tagB, payloadB] = attestationParts(b);
  const byTag = compareBytes(tagA, tagB);
  if (byTag !== 0) return byTag;
  if (a.kind === 'pending' && b.kind === 'pending') return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0;
  if (a.kind === 'bitcoin' && b.kind === 'bitcoin') return a.height - b.height;
  return compareBytes(payloadA, payloadB);
}

// ---------------------------------------------------------------- bytes

function err(code: OtsErrorCode, message: string): { ok: false; error: OtsError } {
  return { ok: false, error: { code, message } };
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

/** Lowercase or uppercase hex of even length, else null. */
export function parseHex(s: string): Uint8Array | null {
  return /^(?:[0-9a-fA-F]{2})*$/.test(s) ? new Uint8Array(Buffer.from(s, 'hex')) : null;
}

function fromHex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'hex'));
}
