// SQL and row mapping shared by the SQLite and PostgreSQL vault adapters (the same text on both).
import type { SealedOwner, SealedSample } from '../vault/port.ts';
import type { Row } from './rows.ts';

/** Per owner and key version, the sealed secret of the smallest id. */
export const SEALED_SAMPLES_SQL = `
  SELECT owner, id, key_version, sealed FROM (
    SELECT 'broker_connection' AS owner, id, key_version, credentials AS sealed,
      ROW_NUMBER() OVER (PARTITION BY key_version ORDER BY id) AS n
      FROM broker_connections WHERE credentials IS NOT NULL
    UNION ALL
    SELECT 'broker_user', agent_id, key_version, secret, ROW_NUMBER() OVER (PARTITION BY key_version ORDER BY agent_id, kind)
      FROM broker_users
    UNION ALL
    SELECT 'webhook_endpoint', id, key_version, secret, ROW_NUMBER() OVER (PARTITION BY key_version ORDER BY id)
      FROM webhook_endpoints
  ) s WHERE n = 1 ORDER BY key_version, owner`;

export const KEY_CHECKS_SQL = 'SELECT version, check_value FROM master_key_checks';

/** $1 version, $2 check value, $3 created at. */
export const ADD_KEY_CHECK_SQL = 'INSERT INTO master_key_checks (version, check_value, created_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING';

export function sampleFromRow(r: Row): SealedSample {
  return { owner: String(r.owner) as SealedOwner, id: String(r.id), keyVersion: Number(r.key_version), sealed: String(r.sealed) };
}

export function keyChecksFromRows(rows: Row[]): Map<number, string> {
  return new Map(rows.map((r) => [Number(r.version), String(r.check_value)]));
}
