// The broker sub-port on PostgreSQL: the same pool and schema as the PostgresStore. One sync per
// connection at a time across every node: a session advisory lock held on a dedicated client for
// the length of the sync (a crashed node's lock goes with its session).
import type { Sealed } from '../../domain/types.ts';
import type pg from 'pg';
import type {
  BrokerConnection, BrokerKind, BrokerStore, BrokerUser, ConnectionPatch, DecisionForLinking, ImportedActivity, ImportedFill, LinkCounts,
  PositionSnapshot, SyncLock,
} from '../../brokers/port.ts';
import {
  CONNECTION_COLUMNS, LINK_COUNTS, connectionFromRow, connectionParams, decisionFromRow, decisionRange, linkCountsFromRows, patchColumns,
  snapshotFromRow, userFromRow,
} from '../broker-rows.ts';
import type { Row } from '../rows.ts';
import { rethrow } from './pool.ts';
import type { PostgresHost } from './pool.ts';

export const syncLockKey = (schema: string, connectionId: string) => `ledger-broker-sync:${schema}:${connectionId}`;

export class PostgresBrokerStore implements BrokerStore {
  constructor(private readonly store: PostgresHost) {}

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.store.pool.query(sql, params)).rows as Row[];
  }

  async createConnection(c: BrokerConnection): Promise<void> {
    await this.q(`INSERT INTO broker_connections (${CONNECTION_COLUMNS.join(', ')}) VALUES (${CONNECTION_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
      connectionParams(c));
  }

  async findConnection(id: string): Promise<BrokerConnection | null> {
    const [row] = await this.q('SELECT * FROM broker_connections WHERE id = $1', [id]);
    return row ? connectionFromRow(row) : null;
  }

  async findConnectionByState(stateHash: string): Promise<BrokerConnection | null> {
    const [row] = await this.q('SELECT * FROM broker_connections WHERE state_hash = $1', [stateHash]);
    return row ? connectionFromRow(row) : null;
  }

  async listConnections(agentId?: string): Promise<BrokerConnection[]> {
    const rows = agentId === undefined
      ? await this.q('SELECT * FROM broker_connections ORDER BY created_at, id')
      : await this.q('SELECT * FROM broker_connections WHERE agent_id = $1 ORDER BY created_at, id', [agentId]);
    return rows.map(connectionFromRow);
  }

  async updateConnection(id: string, patch: ConnectionPatch, at: string): Promise<void> {
    const columns = patchColumns(patch, at);
    await this.q(`UPDATE broker_connections SET ${columns.map(([c], i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${columns.length + 1} AND status <> 'disconnected'`,
      [...columns.map(([, v]) => v), id]);
  }

  async findUser(agentId: string, kind: BrokerKind): Promise<BrokerUser | null> {
    const [row] = await this.q('SELECT * FROM broker_users WHERE agent_id = $1 AND kind = $2', [agentId, kind]);
    return row ? userFromRow(row) : null;
  }

  async saveUser(user: BrokerUser): Promise<BrokerUser> {
    await this.q(`INSERT INTO broker_users (agent_id, kind, user_id, secret, key_version, created_at) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (agent_id, kind) DO NOTHING`, [user.agentId, user.kind, user.userId, user.secret.sealed, user.secret.keyVersion, user.createdAt]);
    return (await this.findUser(user.agentId, user.kind)) as BrokerUser;
  }

  async listUsers(): Promise<BrokerUser[]> {
    return (await this.q('SELECT * FROM broker_users ORDER BY agent_id, kind')).map(userFromRow);
  }

  async updateUserSecret(agentId: string, kind: BrokerKind, secret: Sealed): Promise<void> {
    await this.q('UPDATE broker_users SET secret = $1, key_version = $2 WHERE agent_id = $3 AND kind = $4', [secret.sealed, secret.keyVersion, agentId, kind]);
  }

  async deleteUser(agentId: string, kind: BrokerKind): Promise<void> {
    await this.q('DELETE FROM broker_users WHERE agent_id = $1 AND kind = $2', [agentId, kind]);
  }

  async importedKeys(agentId: string, keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.q('SELECT fill_key FROM broker_fills WHERE agent_id = $1 AND fill_key = ANY($2::text[])', [agentId, [...keys]]);
    return new Set(rows.map((r) => String(r.fill_key)));
  }

  async importedActivityKeys(agentId: string, keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.q('SELECT activity_key FROM broker_activities WHERE agent_id = $1 AND activity_key = ANY($2::text[])', [agentId, [...keys]]);
    return new Set(rows.map((r) => String(r.activity_key)));
  }

  async saveImportedActivities(rows: readonly ImportedActivity[]): Promise<void> {
    if (rows.length === 0) return;
    await this.q(`INSERT INTO broker_activities (agent_id, activity_key, connection_id, record_id)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT (agent_id, activity_key) DO NOTHING`,
    [rows.map((r) => r.agentId), rows.map((r) => r.key), rows.map((r) => r.connectionId), rows.map((r) => r.recordId)]);
  }

  async saveImportedFills(rows: readonly ImportedFill[]): Promise<void> {
    if (rows.length === 0) return;
    const col = <K extends keyof ImportedFill>(k: K) => rows.map((r) => r[k]);
    await this.q(`INSERT INTO broker_fills (agent_id, fill_key, connection_id, record_id, order_key, broker_order_id, symbol, side, quantity,
        cumulative_quantity, decision_id, link_method)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
        $10::text[], $11::text[], $12::text[])
      ON CONFLICT (agent_id, fill_key) DO NOTHING`,
    [col('agentId'), col('key'), col('connectionId'), col('recordId'), col('orderKey'), col('brokerOrderId'), col('symbol'), col('side'),
      col('quantity'), col('cumulativeQuantity'), col('decisionId'), col('linkMethod')]);
  }

  async importedFillsOf(connectionId: string): Promise<Pick<ImportedFill, 'symbol' | 'side' | 'quantity'>[]> {
    const rows = await this.q(`SELECT DISTINCT ON (record_id) symbol, side, quantity FROM broker_fills WHERE connection_id = $1 ORDER BY record_id`, [connectionId]);
    return rows.map((r) => ({ symbol: String(r.symbol), side: String(r.side) as 'buy' | 'sell', quantity: String(r.quantity) }));
  }

  async cumulativeByOrder(agentId: string, brokerOrderIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (brokerOrderIds.length === 0) return out;
    const rows = await this.q(`SELECT broker_order_id, cumulative_quantity FROM broker_fills WHERE agent_id = $1 AND cumulative_quantity IS NOT NULL
      AND broker_order_id = ANY($2::text[])`, [agentId, [...new Set(brokerOrderIds)]]);
    for (const r of rows) out.set(String(r.broker_order_id), [...(out.get(String(r.broker_order_id)) ?? []), String(r.cumulative_quantity)]);
    return out;
  }

  async linkedOrderKeys(decisionIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (decisionIds.length === 0) return out;
    const rows = await this.q('SELECT DISTINCT decision_id, order_key FROM broker_fills WHERE decision_id = ANY($1::text[])', [[...new Set(decisionIds)]]);
    for (const r of rows) out.set(String(r.decision_id), [...(out.get(String(r.decision_id)) ?? []), String(r.order_key)]);
    return out;
  }

  async linkCounts(agentId: string): Promise<LinkCounts> {
    return linkCountsFromRows(await this.q(LINK_COUNTS.replace('?', '$1'), [agentId]));
  }

  async decisionByLinkToken(token: string): Promise<DecisionForLinking | null> {
    const [row] = await this.q("SELECT id, agent_id, symbol, recorded_at, content FROM records WHERE link_token = $1 AND type = 'decision'", [token]);
    return row ? decisionFromRow(row) : null;
  }

  async decisionsBetween(agentId: string, fromMs: number, toMs: number): Promise<DecisionForLinking[]> {
    const { fromSortKey, toRecordedAt } = decisionRange(fromMs, toMs);
    return (await this.q(`SELECT id, agent_id, symbol, recorded_at, content FROM records
      WHERE agent_id = $1 AND sort_key >= $2 AND type = 'decision' AND recorded_at <= $3 ORDER BY sort_key`, [agentId, fromSortKey, toRecordedAt])).map(decisionFromRow);
  }

  async saveSnapshot(s: PositionSnapshot): Promise<void> {
    await this.q(`INSERT INTO broker_snapshots (connection_id, agent_id, taken_at, positions, balances, reconciliation) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (connection_id, taken_at) DO NOTHING`,
    [s.connectionId, s.agentId, s.takenAt, JSON.stringify(s.positions), JSON.stringify(s.balances ?? null), JSON.stringify(s.reconciliation ?? null)]);
  }

  async latestSnapshot(connectionId: string): Promise<PositionSnapshot | null> {
    const [row] = await this.q('SELECT * FROM broker_snapshots WHERE connection_id = $1 ORDER BY taken_at DESC LIMIT 1', [connectionId]);
    return row ? snapshotFromRow(row) : null;
  }

  async tryLockSync(connectionId: string): Promise<SyncLock | null> {
    const key = syncLockKey(this.store.schema, connectionId);
    const client: pg.PoolClient = await this.store.pool.connect();
    try {
      const { rows } = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
      if (rows[0]?.locked !== true) {
        client.release();
        return null;
      }
    } catch (err) {
      client.release(err as Error);
      rethrow(err);
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
          client.release();
        } catch (err) {
          client.release(err as Error); // a broken session loses its lock with it
        }
      },
    };
  }
}
