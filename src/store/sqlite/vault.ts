// The vault sub-port on SQLite: the same database file as the SqliteStore (its connection).
import type { Row } from '../rows.ts';
import type { SealedSample, VaultStore } from '../../vault/port.ts';
import { ADD_KEY_CHECK_SQL, KEY_CHECKS_SQL, keyChecksFromRows, SEALED_SAMPLES_SQL, sampleFromRow } from '../vault-rows.ts';
import type { SqliteHost } from './host.ts';

export class SqliteVaultStore implements VaultStore {
  constructor(private readonly store: SqliteHost) {}

  async keyChecks(): Promise<Map<number, string>> {
    return keyChecksFromRows(this.store.db.prepare(KEY_CHECKS_SQL).all() as Row[]);
  }

  async addKeyCheck(version: number, checkValue: string, at: string): Promise<void> {
    this.store.db.prepare(ADD_KEY_CHECK_SQL.replace(/\$\d/g, '?')).run(version, checkValue, at);
  }

  async sealedSamples(): Promise<SealedSample[]> {
    return (this.store.db.prepare(SEALED_SAMPLES_SQL).all() as Row[]).map(sampleFromRow);
  }
}
