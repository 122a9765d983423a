// Witness cosignatures on PostgreSQL (log/port.ts). The job's hold is a session
// advisory lock on a connection of its own, so one API node asks the witnesses at a time and
// another takes over when it dies; the hold's writes go through that connection.
import pg from 'pg';
import type { CosignatureSession, CosignatureStore, StoredCosignature, WitnessAttempt } from '../../log/port.ts';
import { attemptFromRow, attemptValues, cosignatureFromRow, cosignatureValues, insertCosignature, LATEST_BY_WITNESS, upsertAttempt } from '../cosignature-rows.ts';
import type { Row } from '../rows.ts';
import type { LedgerPool } from './pool.ts';
import { takeSessionLock } from './session-lock.ts';

export const witnessJobLockKey = (schema: string) => `ledger-witness-job:${schema}`;

const dollar = (i: number) => `$${i}`;

export class PostgresCosignatureStore implements CosignatureStore {
  constructor(private readonly pool: LedgerPool, private readonly connection: { connectionString: string; schema: string }) {}

  async at(treeSize: number): Promise<StoredCosignature[]> {
    return ((await this.pool.query('SELECT * FROM log_cosignatures WHERE tree_size = $1 ORDER BY witness', [treeSize])).rows as Row[]).map(cosignatureFromRow);
  }

  async latestByWitness(): Promise<StoredCosignature[]> {
    return ((await this.pool.query(LATEST_BY_WITNESS)).rows as Row[]).map(cosignatureFromRow);
  }

  async attempts(): Promise<WitnessAttempt[]> {
    return ((await this.pool.query('SELECT * FROM log_witness_attempts ORDER BY witness')).rows as Row[]).map(attemptFromRow);
  }

  async tryWitnessJob(): Promise<CosignatureSession | null> {
    const client = new pg.Client({ connectionString: this.connection.connectionString, options: `-c search_path=${this.connection.schema}` });
    let lost = false;
    client.on('error', () => { lost = true; });
    if (!(await takeSessionLock(client, witnessJobLockKey(this.connection.schema)))) return null;
    const q = async (sql: string, params: unknown[]) => {
      if (lost) throw new Error('the witnessing job\'s lock connection is gone');
      await client.query(sql, params);
    };
    return {
      get lost() { return lost; },
      add: (c) => q(insertCosignature(dollar), cosignatureValues(c)),
      noteAttempt: (a) => q(upsertAttempt(dollar), attemptValues(a)),
      release: async () => { await client.end().catch(() => undefined); },
    };
  }
}
