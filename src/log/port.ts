// The log wing's storage. The global log (log_v1), a sub-port of the Store: which record is at
// which log_index, the tree in tile form (each hash tile's hashes, level 0 the leaf hashes), and the signed
// checkpoints. A batch of the integrator (src/log/integrator.ts) writes its leaves, tiles and
// checkpoint in ONE transaction, so a crash at any point leaves either all of it or none.
// Record tables are never touched here: records are read, never updated.
import type { StoredRecord } from '../domain/types.ts';

/** A hash tile as stored: its hashes concatenated (32 bytes each), 1..256 of them. */
export type StoredTile = { level: number; index: number; hashes: Uint8Array };

export type StoredCheckpoint = {
  treeSize: number;
  /** The signed note, exactly as published. */
  note: string;
  /** The vkey of the log key that signed it. */
  vkey: string;
  createdAt: string;
};

/** One integration: everything written in one transaction. */
export type LogBatch = {
  /** Consecutive log indexes from the stored tree size on, each with its record's sort key. */
  leaves: { logIndex: number; recordId: string; sortKey: string }[];
  /** Hash tiles whose content grew: each written whole (a partial tile is replaced by a wider one). */
  tiles: StoredTile[];
  checkpoint: StoredCheckpoint & { root: Uint8Array };
};

export type LeafPosition = { logIndex: number; recordId: string };

/** Reads of the log, shared by the integrator and the public reads. */
export interface LogReader {
  latestCheckpoint(): Promise<StoredCheckpoint | null>;
  checkpointAt(treeSize: number): Promise<StoredCheckpoint | null>;
  /** The stored tiles among `ids` (absent ones are left out). */
  tiles(ids: { level: number; index: number }[]): Promise<StoredTile[]>;
  /** Where a record is in the log; null until integrated. */
  leafOf(recordId: string): Promise<LeafPosition | null>;
  /** The records at log indexes start .. start + count - 1, in log order (fewer past the end). */
  entries(start: number, count: number): Promise<StoredRecord[]>;
}

/**
 * The integrator's hold on the log: at most one session integrates at a time (PostgreSQL: a
 * session advisory lock on its own connection; SQLite: one writer, and `integrate` re-checks the
 * tree size inside its IMMEDIATE transaction).
 */
export interface IntegratorSession {
  /** The sort key of the last integrated record (null for an empty log). */
  lastSortKey(): Promise<string | null>;
  /** Records committed after `afterSortKey`, in commit order (sort key), at most `limit`. */
  pending(afterSortKey: string | null, limit: number): Promise<StoredRecord[]>;
  /** How many records wait after `afterSortKey`, counting at most `limit`. */
  countPending(afterSortKey: string | null, limit: number): Promise<number>;
  /**
   * Writes the batch in one transaction, after checking that the stored tree still has
   * `expectedSize` leaves; throws (writing nothing) otherwise: LogMovedOn where another
   * integrator may commit first by design (SQLite), a plain Error where that is a fault.
   */
  integrate(expectedSize: number, batch: LogBatch): Promise<void>;
  /** Gives the hold up (PostgreSQL: unlocks and closes its connection). */
  release(): Promise<void>;
}

/**
 * An integration refused, writing nothing, because the stored log grew past the size its batch was
 * built on. On SQLite every process serving the file integrates and this size check is what keeps
 * them apart: the one that commits second lost a race, which is no fault (docs/log.md).
 */
export class LogMovedOn extends Error {
  constructor(readonly storedSize: number, readonly expectedSize: number) {
    super(`another process integrated first (the stored log has ${storedSize} leaves, this batch was built on ${expectedSize})`);
    this.name = 'LogMovedOn';
  }
}

export interface LogStore extends LogReader {
  /** The integrator's hold, or null while another process holds it. */
  tryIntegrator(): Promise<IntegratorSession | null>;
}

// Witness cosignatures of the checkpoints (C2SP tlog-witness, docs/witnesses.md), a second
// sub-port of the Store: every cosignature line received from a witness of the policy, verified
// before it is stored, one per (checkpoint, witness), append-only like the checkpoints; and per
// witness the state of asking it (last attempt, last error, when to try again), which changes.
// Written only by the witnessing job (src/log/witnessing.ts) while it holds the job's hold.

export type StoredCosignature = {
  treeSize: number;
  /** The witness's cosigner vkey (type 0x04), as the policy gives it. */
  witness: string;
  /** The signature line, `— <name> <base64>\n`, exactly as the witness answered it. */
  line: string;
  /** The cosignature's timestamp: POSIX seconds by the witness's clock. */
  cosignedAt: number;
  receivedAt: string;
};

export type WitnessAttempt = {
  witness: string;
  lastAttemptAt: string;
  /** Null once an attempt succeeded. */
  lastError: string | null;
  lastErrorAt: string | null;
  /** Consecutive failures (0 after a success). */
  failures: number;
  nextAttemptAt: string | null;
};

export interface CosignatureReader {
  /** The cosignatures of the checkpoint of this tree size, by witness vkey. */
  at(treeSize: number): Promise<StoredCosignature[]>;
  /** Each witness's cosignature of the largest tree size it cosigned. */
  latestByWitness(): Promise<StoredCosignature[]>;
  attempts(): Promise<WitnessAttempt[]>;
}

/** The witnessing job's hold: one process at a time asks the witnesses. */
export interface CosignatureSession {
  readonly lost?: boolean;
  /** Stores a verified cosignature; one already stored for that (tree size, witness) is kept. */
  add(cosignature: StoredCosignature): Promise<void>;
  noteAttempt(attempt: WitnessAttempt): Promise<void>;
  release(): Promise<void>;
}

export interface CosignatureStore extends CosignatureReader {
  /** The job's hold, or null while another process holds it (PostgreSQL: a session advisory lock). */
  tryWitnessJob(): Promise<CosignatureSession | null>;
}
