// The vault sub-port on PostgreSQL: the same pool and schema as the PostgresStore.
import type { Row } from '../rows.ts';
import type { SealedSample, VaultStore } from '../../vault/port.ts';
import { ADD_KEY_CHECK_SQL, KEY_CHECKS_SQL, keyChecksFromRows, SEALED_SAMPLES_SQL, sampleFromRow } from '../vault-rows.ts';
import type { PostgresHost } from './pool.ts';

export class PostgresVaultStore implements VaultStore {
  constructor(private readonly store: PostgresHost) {}

  private async rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.store.pool.query(sql, params)).rows as Row[];
  }

  async keyChecks(): Promise<Map<number, string>> {
    return keyChecksFromRows(await this.rows(KEY_CHECKS_SQL));
  }

  async addKeyCheck(version: number, checkValue: string, at: string): Promise<void> {
    await this.rows(ADD_KEY_CHECK_SQL, [version, checkValue, at]);
  }

  async sealedSamples(): Promise<SealedSample[]> {
    return (await this.rows(SEALED_SAMPLES_SQL)).map(sampleFromRow);
  }
}
