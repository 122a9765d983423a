// Witness cosignatures on SQLite (log/port.ts). The serving process is the only
// writer, so the job's hold is the job itself.
import type { CosignatureSession, CosignatureStore, StoredCosignature, WitnessAttempt } from '../../log/port.ts';
import { attemptFromRow, attemptValues, cosignatureFromRow, cosignatureValues, insertCosignature, LATEST_BY_WITNESS, upsertAttempt } from '../cosignature-rows.ts';
import type { Row } from '../rows.ts';
import type { SqliteDatabase } from './driver.ts';

export class SqliteCosignatureStore implements CosignatureStore {
  constructor(private readonly db: SqliteDatabase) {}

  async at(treeSize: number): Promise<StoredCosignature[]> {
    return (this.db.prepare('SELECT * FROM log_cosignatures WHERE tree_size = ? ORDER BY witness').all(treeSize) as Row[]).map(cosignatureFromRow);
  }

  async latestByWitness(): Promise<StoredCosignature[]> {
    return (this.db.prepare(LATEST_BY_WITNESS).all() as Row[]).map(cosignatureFromRow);
  }

  async attempts(): Promise<WitnessAttempt[]> {
    return (this.db.prepare('SELECT * FROM log_witness_attempts ORDER BY witness').all() as Row[]).map(attemptFromRow);
  }

  async tryWitnessJob(): Promise<CosignatureSession | null> {
    const db = this.db;
    return {
      add: async (c) => { db.prepare(insertCosignature(() => '?')).run(...cosignatureValues(c)); },
      noteAttempt: async (a) => { db.prepare(upsertAttempt(() => '?')).run(...attemptValues(a)); },
      release: async () => {},
    };
  }
}
