// Rows of log_anchors to and from StoredAnchor, and the anchors' counts, shared by both adapters.
import type { AnchorCounts, AnchorUpdate, StoredAnchor } from '../anchor/port.ts';
import type { Row } from './rows.ts';

const bytes = (v: unknown): Uint8Array => new Uint8Array(v as Buffer);
const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function anchorFromRow(r: Row): StoredAnchor {
  return {
    treeSize: Number(r.tree_size),
    root: String(r.root),
    digest: bytes(r.digest),
    ots: bytes(r.ots),
    status: r.status === 'confirmed' ? 'confirmed' : 'pending',
    calendars: JSON.parse(String(r.calendars)) as string[],
    block: r.block_height === null || r.block_height === undefined ? null : {
      height: Number(r.block_height), hash: String(r.block_hash), merkleRoot: String(r.block_merkle_root), time: Number(r.block_time),
    },
    createdAt: String(r.created_at),
    lastAttemptAt: text(r.last_attempt_at),
    lastError: text(r.last_error),
    attempts: Number(r.attempts),
    nextAttemptAt: text(r.next_attempt_at),
  };
}

export const ANCHOR_INSERT_COLUMNS = 'tree_size, root, digest, ots, status, calendars, block_height, block_hash, block_merkle_root, block_time, created_at, last_attempt_at, last_error, attempts, next_attempt_at';

export function anchorInsertValues(a: StoredAnchor): unknown[] {
  return [a.treeSize, a.root, Buffer.from(a.digest), Buffer.from(a.ots), a.status, JSON.stringify(a.calendars),
    ...blockValues(a.block), a.createdAt, a.lastAttemptAt, a.lastError, a.attempts, a.nextAttemptAt];
}

export const ANCHOR_UPDATE_COLUMNS = ['ots', 'status', 'block_height', 'block_hash', 'block_merkle_root', 'block_time', 'last_attempt_at', 'last_error', 'attempts', 'next_attempt_at'];

export function anchorUpdateValues(c: AnchorUpdate): unknown[] {
  return [Buffer.from(c.ots), c.status, ...blockValues(c.block), c.lastAttemptAt, c.lastError, c.attempts, c.nextAttemptAt];
}

function blockValues(b: StoredAnchor['block']): unknown[] {
  return b ? [b.height, b.hash, b.merkleRoot, b.time] : [null, null, null, null];
}

/** The anchors by status, kept by the triggers on log_anchors: a row per status, never a count of the anchors. */
export const ANCHOR_COUNTS_SQL = 'SELECT status, anchors FROM log_anchor_counts';

export function anchorCountsFromRows(rows: Row[]): AnchorCounts {
  const of = (status: string) => Number(rows.find((r) => r.status === status)?.anchors ?? 0);
  return { confirmed: of('confirmed'), pending: of('pending') };
}
