// canon_v1 chain entries and hashes (§3 content_hash, §4 chain_hash).
// It owns the exact chain entry document and the two hashes every record carries.

import { canonicalJson, type CanonValue } from './canon.ts';
import { sha256Hex } from './sha256.ts';
import { isRecordedAt } from './time.ts';

export const CANON = 'canon_v1';
export const GENESIS_PREV_HASH = '0'.repeat(64);

export type RecordType = 'decision' | 'execution' | 'activity';

export type SignatureEnvelope = { key_id: string; nonce: string; signature: string };

export type ChainEntryInput = {
  agent: string;
  seq: number;
  id: string;
  type: RecordType;
  recordedAt: string;
  contentHash: string;
  prevHash: string;
  signature?: SignatureEnvelope | null;
};

/** The chain entry of canon_v1 §4; `signature` only for agent-signed records. */
export function chainEntry(e: ChainEntryInput): CanonValue {
  if (!Number.isSafeInteger(e.seq) || e.seq < 1) throw new TypeError(`chainEntry: seq must be a positive integer, got ${e.seq}`);
  const entry: { [key: string]: CanonValue } = {
    canon: CANON,
    agent: e.agent,
    seq: String(e.seq),
    id: e.id,
    type: e.type,
    recorded_at: e.recordedAt,
    content_hash: e.contentHash,
    prev_hash: e.prevHash,
  };
  if (e.signature) {
    entry.signature = { key_id: e.signature.key_id, nonce: e.signature.nonce, signature: e.signature.signature };
  }
  return entry;
}

/** A stored record's fields its chain entry is made of, as the store keeps them. */
export type StoredEntryFields = {
  agentHandle: string; chainSeq: number; id: string; type: RecordType; recordedAt: string; contentHash: string; prevHash: string; signature: SignatureEnvelope | null;
};

/** canon_v1(chain entry) of a stored record: the exact text whose sha256 is its chain_hash (and the log's leaf text). */
export function entryText(r: StoredEntryFields): string {
  return canonicalJson(chainEntry({
    agent: r.agentHandle, seq: r.chainSeq, id: r.id, type: r.type, recordedAt: r.recordedAt,
    contentHash: r.contentHash, prevHash: r.prevHash, signature: r.signature,
  }));
}

/** A record id's ULID part (after its type prefix): record ids of every type sort by it chronologically. */
export function sortKeyOf(recordId: string): string {
  const i = recordId.indexOf('_');
  return i < 0 ? recordId : recordId.slice(i + 1);
}

/** sha256 hex of canon_v1(content document). */
export function contentHash(contentDocument: CanonValue): string {
  return sha256Hex(canonicalJson(contentDocument));
}

/** sha256 hex of canon_v1(chain entry). */
export function chainHash(e: ChainEntryInput): string {
  return sha256Hex(canonicalJson(chainEntry(e)));
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC, millisecond precision); throws outside years 0000-9999. */
export function formatRecordedAt(d: Date): string {
  if (!Number.isFinite(d.getTime())) throw new RangeError('formatRecordedAt: invalid Date');
  const s = d.toISOString();
  if (!isRecordedAt(s)) throw new RangeError(`formatRecordedAt: year outside 0000-9999: ${s}`);
  return s;
}
