// Bitcoin anchors of the global log's checkpoints (log_v1 §5), a sub-port of the Store: one row per
// anchored checkpoint (by tree size) with its `.ots` file, pending until a calendar's commitment is
// in a block and the job has checked that block's header, then confirmed. Plus the anchoring job's
// one shared fact: since when no calendar answers. Written only by the anchoring job
// (src/anchor/job.ts), which holds the job's hold while it does.

export type AnchorStatus = 'pending' | 'confirmed';

export type BlockRef = { height: number; hash: string; merkleRoot: string; time: number };

export type StoredAnchor = {
  treeSize: number;
  /** base64, as in the checkpoint */
  root: string;
  /** SHA-256(checkpoint body) */
  digest: Uint8Array;
  ots: Uint8Array;
  status: AnchorStatus;
  calendars: string[];
  block: BlockRef | null;
  createdAt: string;
  lastAttemptAt: string | null;
  lastError: string | null;
  attempts: number;
  nextAttemptAt: string | null;
};

export type AnchorUpdate = Pick<StoredAnchor, 'ots' | 'status' | 'block' | 'lastAttemptAt' | 'lastError' | 'attempts' | 'nextAttemptAt'>;

export type AnchorCounts = { confirmed: number; pending: number };

export interface AnchorReader {
  /** Newest first (largest tree size), below `beforeTreeSize` when given. */
  list(limit: number, beforeTreeSize?: number): Promise<StoredAnchor[]>;
  at(treeSize: number): Promise<StoredAnchor | null>;
  latest(status?: AnchorStatus): Promise<StoredAnchor | null>;
  /** The anchor of the smallest checkpoint with this status that covers log index `logIndex`. */
  covering(logIndex: number, status: AnchorStatus): Promise<StoredAnchor | null>;
  counts(): Promise<AnchorCounts>;
  /** Since when no calendar answered (ISO time), null while they do. */
  calendarsUnreachableSince(): Promise<string | null>;
}

/** The anchoring job's hold: at most one job writes anchors at a time. */
export interface AnchorSession {
  insert(anchor: StoredAnchor): Promise<void>;
  update(treeSize: number, change: AnchorUpdate): Promise<void>;
  /**
   * The pending anchors whose next attempt is due at `now` (ISO time; never tried counts as due),
   * oldest first, at most `limit`: a round reads only what it will poll, however many wait.
   */
  due(now: string, limit: number): Promise<StoredAnchor[]>;
  setCalendarsUnreachableSince(since: string | null): Promise<void>;
  release(): Promise<void>;
}

export interface AnchorStore extends AnchorReader {
  /** The job's hold, or null while another process holds it (PostgreSQL: a session advisory lock). */
  tryAnchorJob(): Promise<AnchorSession | null>;
}
