// The witness's state in SQLite (`<data>/witness.db`): one row per log origin, in WAL mode with
// synchronous=FULL, so a committed advance survives a crash or power loss before the witness
// answers. Owns the schema and the compare-and-swap transaction of WitnessStatePort.
import Database, { type SqliteDatabase } from '../store/sqlite/driver.ts';
import { hashesEqual } from '../core/merkle.ts';
import type { AdvanceResult, CosignedState, WitnessStatePort } from './state.ts';

type Row = { origin: string; size: number; root: Buffer; note: string; cosigned_at: number };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS witness_checkpoints (
  origin TEXT PRIMARY KEY,
  size INTEGER NOT NULL CHECK (size >= 0),
  root BLOB NOT NULL CHECK (length(root) = 32),
  note TEXT NOT NULL,
  cosigned_at INTEGER NOT NULL
) STRICT;`;

function fromRow(row: Row): CosignedState {
  return { origin: row.origin, size: row.size, root: new Uint8Array(row.root), note: row.note, cosignedAt: row.cosigned_at };
}

export class SqliteWitnessState implements WitnessStatePort {
  private readonly db: SqliteDatabase;
  private readonly advanceTx: (expected: { size: number; root: Uint8Array } | null, next: CosignedState) => AdvanceResult;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 10000');
    this.db.exec(SCHEMA);
    const select = this.db.prepare<[string], Row>('SELECT origin, size, root, note, cosigned_at FROM witness_checkpoints WHERE origin = ?');
    const upsert = this.db.prepare(
      `INSERT INTO witness_checkpoints (origin, size, root, note, cosigned_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, note = excluded.note, cosigned_at = excluded.cosigned_at`,
    );
    const tx = this.db.transaction((expected: { size: number; root: Uint8Array } | null, next: CosignedState): AdvanceResult => {
      const row = select.get(next.origin);
      const current = row ? fromRow(row) : null;
      const same = expected === null
        ? current === null
        : current !== null && current.size === expected.size && hashesEqual(current.root, expected.root);
      if (!same) return { ok: false, current };
      upsert.run(next.origin, next.size, Buffer.from(next.root), next.note, next.cosignedAt);
      return { ok: true };
    });
    // IMMEDIATE: the write lock is taken before the read, so two processes cannot both pass the check.
    this.advanceTx = (expected, next) => tx.immediate(expected, next);
    this.latestStmt = select;
  }

  private readonly latestStmt: ReturnType<SqliteDatabase['prepare']>;

  latest(origin: string): CosignedState | null {
    const row = this.latestStmt.get(origin) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  advance(expected: { size: number; root: Uint8Array } | null, next: CosignedState): AdvanceResult {
    return this.advanceTx(expected, next);
  }

  close(): void {
    this.db.close();
  }
}
