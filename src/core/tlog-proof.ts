// C2SP tlog-proof@v1: a leaf's inclusion proof and the signed checkpoint it leads to, as one text
// (log_v1 §4 `tlog_proof`). This file owns its exact text, strict parsing, and checking one end to
// end against the log's vkey (signature, origin, inclusion), with Ed25519 injected.

import { b64Decode, b64Encode } from './base64.ts';
import { HASH_SIZE, isCount, verifyInclusion, type Hash, type LogResult } from './merkle.ts';
import {
  openCheckpoint,
  parseCheckpointBody,
  parseDecimalCount,
  parseNote,
  type Checkpoint,
  type Ed25519Verify,
  type Note,
  type Vkey,
} from './note.ts';

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

/** extra: optional opaque, unauthenticated application data; checkpoint: the signed note, verbatim. */
export type TlogProof = { extra?: Uint8Array; index: number; hashes: Hash[]; checkpoint: string };

function ok<T>(value: T): LogResult<T> {
  return { ok: true, value };
}

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

export function encodeTlogProof(proof: TlogProof): LogResult<string> {
  if (!isCount(proof.index)) return fail('index must be a non-negative safe integer');
  if (!proof.hashes.every((h) => h.length === HASH_SIZE)) return fail('a proof hash is not 32 bytes');
  const note = parseNote(proof.checkpoint);
  if (!note.ok) return fail(`checkpoint: ${note.error}`);
  const lines = [TLOG_PROOF_HEADER];
  if (proof.extra !== undefined) lines.push(`extra ${b64Encode(proof.extra)}`);
  lines.push(`index ${proof.index}`);
  for (const h of proof.hashes) lines.push(b64Encode(h));
  return ok(`${lines.join('\n')}\n\n${proof.checkpoint}`);
}

/**
 * Parses a tlog-proof strictly: the header, an optional extra line, the index, the proof hashes
 * (32 bytes each), a blank line, then a signed checkpoint that parses as a strict log_v1 checkpoint
 * and whose tree holds the index. Signatures are not checked here; see verifyTlogProof.
 */
export function parseTlogProof(text: string): LogResult<TlogProof & { note: Note; body: Checkpoint }> {
  if (typeof text !== 'string') return fail('tlog-proof must be a string');
  const blank = text.indexOf('\n\n');
  if (blank < 0) return fail('tlog-proof has no blank line before the checkpoint');
  const lines = text.slice(0, blank).split('\n');
  const checkpoint = text.slice(blank + 2);

  if (lines.shift() !== TLOG_PROOF_HEADER) return fail(`first line is not ${TLOG_PROOF_HEADER}`);
  let extra: Uint8Array | undefined;
  if (lines[0]?.startsWith('extra ')) {
    const bytes = b64Decode(lines.shift()!.slice('extra '.length));
    if (!bytes) return fail('extra is not strict base64');
    extra = bytes;
  }
  const indexLine = lines.shift();
  if (indexLine === undefined || !indexLine.startsWith('index ')) return fail('no index line');
  const index = parseDecimalCount(indexLine.slice('index '.length));
  if (index === null) return fail('index is not a canonical decimal');
  const hashes: Hash[] = [];
  for (const line of lines) {
    const h = b64Decode(line);
    if (!h || h.length !== HASH_SIZE) return fail('a proof line is not a base64 32-byte hash');
    hashes.push(h);
  }

  const note = parseNote(checkpoint);
  if (!note.ok) return fail(`checkpoint: ${note.error}`);
  const body = parseCheckpointBody(note.value.text);
  if (!body.ok) return fail(`checkpoint: ${body.error}`);
  if (index >= body.value.size) return fail('index is not in the checkpoint tree');
  const proof: TlogProof = { index, hashes, checkpoint };
  if (extra !== undefined) proof.extra = extra;
  return ok({ ...proof, note: note.value, body: body.value });
}

/**
 * Checks a tlog-proof for a leaf: it parses, the checkpoint is signed by the log (vkey, whose name
 * is the origin), and the inclusion path leads from the leaf hash to the checkpoint's root.
 */
export function verifyTlogProof(
  text: string,
  leafHash: Hash,
  vkey: Vkey,
  verify: Ed25519Verify,
): LogResult<{ index: number; checkpoint: Checkpoint }> {
  const proof = parseTlogProof(text);
  if (!proof.ok) return proof;
  const opened = openCheckpoint(proof.value.checkpoint, vkey, verify);
  if (!opened.ok) return opened;
  const { checkpoint } = opened.value;
  const inclusion = verifyInclusion({
    index: proof.value.index,
    size: checkpoint.size,
    leafHash,
    proof: proof.value.hashes,
    root: checkpoint.root,
  });
  if (!inclusion.ok) return inclusion;
  return ok({ index: proof.value.index, checkpoint });
}
