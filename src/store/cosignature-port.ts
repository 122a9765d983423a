// Witness cosignatures of the global log's checkpoints (C2SP tlog-witness, docs/witnesses.md), a
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
