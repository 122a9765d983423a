// C2SP tlog-witness v1 `add-checkpoint` and the monitoring read, over the state port: parse the
// request, check the log's signature, the `old` size and the consistency proof, cosign, store the
// new state durably (compare-and-swap), and only then answer. Owns the mapping of every outcome to
// the protocol's status code: 200 cosignature line, 400 malformed / old > size, 403 no valid
// signature by a trusted key, 404 unknown origin, 409 `old` is not the cosigned size (body = that
// size, text/x.tlog.size), 422 the checkpoint is not consistent with what was cosigned.
import { b64Decode } from '../core/base64.ts';
import { signCosignature } from '../core/cosignature.ts';
import { emptyRoot, hashesEqual, HASH_SIZE, verifyConsistency, type Hash } from '../core/merkle.ts';
import { encodeSignatureLine, parseDecimalCount, parseNote, type Ed25519Verify, type Note, type NoteSignature } from '../core/note.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { LogList } from './log-list.ts';
import type { WitnessKey } from './key.ts';
import type { CosignedState, WitnessStatePort } from './state.ts';

/** transparency-dev/witness caps the request body at 16 KiB. */
export const MAX_REQUEST_BYTES = 16 * 1024;
/** A consistency proof of a tree below 2^63 leaves has at most 63 hashes (the spec's 0-63 lines). */
export const MAX_PROOF_HASHES = 63;
export const SIZE_CONTENT_TYPE = 'text/x.tlog.size';

export type WitnessAnswer = { status: number; contentType: string; body: string };

export type Witness = {
  logs: LogList;
  key: WitnessKey;
  state: WitnessStatePort;
  verify: Ed25519Verify;
  /** POSIX seconds, for the cosignature timestamp. */
  now: () => number;
  /** Origin by the lowercase hex SHA-256 of it, for the monitoring path. */
  originsByHash: Map<string, string>;
};

export function originsByHash(logs: LogList): Map<string, string> {
  return new Map([...logs.keys()].map((origin) => [sha256Hex(origin), origin]));
}

type Request = { old: number; proof: Hash[]; note: string };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function text(status: number, body: string): WitnessAnswer {
  return { status, contentType: 'text/plain; charset=utf-8', body: body.endsWith('\n') ? body : `${body}\n` };
}

function conflict(size: number): WitnessAnswer {
  return { status: 409, contentType: SIZE_CONTENT_TYPE, body: `${size}\n` };
}

/** The body: `old <N>`, 0-63 base64 hashes, an empty line, the signed checkpoint. */
export function parseAddCheckpoint(body: Uint8Array): { ok: true; value: Request } | { ok: false; error: string } {
  if (body.length > MAX_REQUEST_BYTES) return { ok: false, error: `request body is over ${MAX_REQUEST_BYTES} bytes` };
  let s: string;
  try {
    s = strictUtf8.decode(body);
  } catch {
    return { ok: false, error: 'request body is not UTF-8' };
  }
  const blank = s.indexOf('\n\n');
  if (blank < 0) return { ok: false, error: 'no empty line before the checkpoint' };
  const head = s.slice(0, blank).split('\n');
  const oldLine = head.shift()!;
  if (!oldLine.startsWith('old ')) return { ok: false, error: 'first line is not old <size>' };
  const old = parseDecimalCount(oldLine.slice(4));
  if (old === null) return { ok: false, error: 'old is not a canonical decimal' };
  if (head.length > MAX_PROOF_HASHES) return { ok: false, error: `more than ${MAX_PROOF_HASHES} proof hashes` };
  const proof: Hash[] = [];
  for (const line of head) {
    const h = b64Decode(line);
    if (!h || h.length !== HASH_SIZE) return { ok: false, error: 'a proof line is not a base64 32-byte hash' };
    proof.push(h);
  }
  return { ok: true, value: { old, proof, note: s.slice(blank + 2) } };
}

/** Checkpoint text: origin, size, root, then extension lines (signed over, not interpreted). */
function parseCheckpointText(noteText: string): { origin: string; size: number; root: Hash } | null {
  const lines = noteText.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((l) => l === '')) return null;
  const size = parseDecimalCount(lines[1]!);
  const root = b64Decode(lines[2]!);
  if (size === null || !root || root.length !== HASH_SIZE) return null;
  return { origin: lines[0]!, size, root };
}

/** The log's signatures that verify under a trusted key; null if none does or a trusted one fails. */
function trustedSignatures(w: Witness, origin: string, note: Note): NoteSignature[] | null {
  const log = w.logs.get(origin)!;
  const message = new TextEncoder().encode(note.text);
  const good: NoteSignature[] = [];
  for (const sig of note.signatures) {
    const vkey = log.vkeys.find((k) => k.name === sig.name && hashesEqual(k.keyId, sig.keyId));
    if (!vkey) continue;
    if (sig.signature.length !== 64 || !w.verify(vkey.publicKey, message, sig.signature)) return null;
    good.push(sig);
  }
  return good.length > 0 ? good : null;
}

/** The consistency verdict of moving from the stored state (size old) to the new checkpoint. */
function consistent(stored: CosignedState | null, req: Request, next: { size: number; root: Hash }): string | null {
  if (req.old === 0) {
    if (req.proof.length !== 0) return 'a consistency proof from size 0 must be empty';
    if (next.size === 0 && !hashesEqual(next.root, emptyRoot())) return 'a size-0 checkpoint must have the empty root';
    if (stored && stored.size === 0 && next.size === 0 && !hashesEqual(stored.root, next.root)) return 'root differs at the same size';
    return null;
  }
  const verdict = verifyConsistency({ size1: req.old, size2: next.size, root1: stored!.root, root2: next.root, proof: req.proof });
  return verdict.ok ? null : verdict.error;
}

/** POST <prefix>/add-checkpoint. */
export function addCheckpoint(w: Witness, body: Uint8Array): WitnessAnswer {
  const req = parseAddCheckpoint(body);
  if (!req.ok) return text(400, req.error);
  const note = parseNote(req.value.note);
  if (!note.ok) return text(400, `checkpoint: ${note.error}`);
  const origin = note.value.text.slice(0, note.value.text.indexOf('\n'));
  if (!w.logs.has(origin)) return text(404, 'unknown log');
  const signatures = trustedSignatures(w, origin, note.value);
  if (!signatures) return text(403, 'no valid signature by a trusted key of this log');
  const cp = parseCheckpointText(note.value.text);
  if (!cp) return text(400, 'checkpoint: not origin, size, root and extension lines');
  if (req.value.old > cp.size) return text(400, `old ${req.value.old} is larger than the checkpoint size ${cp.size}`);

  const stored = w.state.latest(origin);
  if (req.value.old !== (stored?.size ?? 0)) return conflict(stored?.size ?? 0);
  const why = consistent(stored, req.value, cp);
  if (why) return text(422, why);

  const time = Math.max(1, Math.floor(w.now()));
  const line = signCosignature(note.value.text, time, { name: w.key.name, publicKey: w.key.publicKey }, w.key.sign);
  if (!line.ok) return text(500, 'could not cosign');
  const served = `${note.value.text}\n${signatures.map(encodeSignatureLine).join('')}${line.value}`;
  const next: CosignedState = { origin, size: cp.size, root: cp.root, note: served, cosignedAt: time };
  const swapped = w.state.advance(stored ? { size: stored.size, root: stored.root } : null, next);
  // Another request (or process) advanced the state since it was read: the client's `old` is stale.
  if (!swapped.ok) return conflict(swapped.current?.size ?? 0);
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: line.value };
}

/** GET <prefix>/<lowercase hex SHA-256 of the origin>/checkpoint: the latest cosigned checkpoint. */
export function latestCheckpoint(w: Witness, originHash: string): WitnessAnswer {
  const origin = w.originsByHash.get(originHash);
  if (origin === undefined) return text(404, 'unknown log');
  const stored = w.state.latest(origin);
  return stored ? { status: 200, contentType: 'text/plain; charset=utf-8', body: stored.note } : text(404, 'not cosigned yet');
}
