// The broker sub-port on SQLite: the same database file as the SqliteStore (its connection).
// One sync per connection at a time is kept in this process (SQLite serves one process).
import type { Sealed } from '../../domain/types.ts';
import type {
  BrokerConnection, BrokerKind, BrokerStore, BrokerUser, ConnectionPatch, DecisionForLinking, ImportedActivity, ImportedFill, LinkCounts,
  PositionSnapshot, SyncLock,
} from '../../brokers/port.ts';
import {
  CONNECTION_COLUMNS, LINK_COUNTS, connectionFromRow, connectionParams, decisionFromRow, decisionRange, linkCountsFromRows, patchColumns,
  snapshotFromRow, userFromRow,
} from '../broker-rows.ts';
import type { Row } from '../rows.ts';
import type { SqliteHost } from './host.ts';

/** Sync locks held in this process, by database path and connection id. */
const heldLocks = new Set<string>();

/** SQLite's default limit on bound parameters is far above this; chunks keep statements reusable. */
const CHUNK = 200;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export class SqliteBrokerStore implements BrokerStore {
  constructor(private readonly store: SqliteHost) {}

  private get db() {
    return this.store.db;
  }

  private rows(sql: string, ...params: unknown[]): Row[] {
    return this.db.prepare(sql).all(...params) as Row[];
  }

  async createConnection(c: BrokerConnection): Promise<void> {
    this.db.prepare(`INSERT INTO broker_connections (${CONNECTION_COLUMNS.join(', ')}) VALUES (${CONNECTION_COLUMNS.map(() => '?').join(', ')})`)
      .run(...connectionParams(c));
  }

  async findConnection(id: string): Promise<BrokerConnection | null> {
    const [row] = this.rows('SELECT * FROM broker_connections WHERE id = ?', id);
    return row ? connectionFromRow(row) : null;
  }

  async findConnectionByState(stateHash: string): Promise<BrokerConnection | null> {
    const [row] = this.rows('SELECT * FROM broker_connections WHERE state_hash = ?', stateHash);
    return row ? connectionFromRow(row) : null;
  }

  async listConnections(agentId?: string): Promise<BrokerConnection[]> {
    const rows = agentId === undefined
      ? this.rows('SELECT * FROM broker_connections ORDER BY created_at, id')
      : this.rows('SELECT * FROM broker_connections WHERE agent_id = ? ORDER BY created_at, id', agentId);
    return rows.map(connectionFromRow);
  }

  async updateConnection(id: string, patch: ConnectionPatch, at: string): Promise<void> {
    const columns = patchColumns(patch, at);
    this.db.prepare(`UPDATE broker_connections SET ${columns.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ? AND status <> 'disconnected'`)
      .run(...columns.map(([, v]) => v), id);
  }

  async findUser(agentId: string, kind: BrokerKind): Promise<BrokerUser | null> {
    const [row] = this.rows('SELECT * FROM broker_users WHERE agent_id = ? AND kind = ?', agentId, kind);
    return row ? userFromRow(row) : null;
  }

  async saveUser(user: BrokerUser): Promise<BrokerUser> {
    this.db.prepare(`INSERT INTO broker_users (agent_id, kind, user_id, secret, key_version, created_at) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (agent_id, kind) DO NOTHING`)
      .run(user.agentId, user.kind, user.userId, user.secret.sealed, user.secret.keyVersion, user.createdAt);
    return (await this.findUser(user.agentId, user.kind)) as BrokerUser;
  }

  async listUsers(): Promise<BrokerUser[]> {
    return this.rows('SELECT * FROM broker_users ORDER BY agent_id, kind').map(userFromRow);
  }

  async updateUserSecret(agentId: string, kind: BrokerKind, secret: Sealed): Promise<void> {
    this.db.prepare('UPDATE broker_users SET secret = ?, key_version = ? WHERE agent_id = ? AND kind = ?').run(secret.sealed, secret.keyVersion, agentId, kind);
  }

  async deleteUser(agentId: string, kind: BrokerKind): Promise<void> {
    this.db.prepare('DELETE FROM broker_users WHERE agent_id = ? AND kind = ?').run(agentId, kind);
  }

  async importedKeys(agentId: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const part of chunks(keys)) {
      const rows = this.rows(`SELECT fill_key FROM broker_fills WHERE agent_id = ? AND fill_key IN (${part.map(() => '?').join(', ')})`, agentId, ...part);
      for (const r of rows) found.add(String(r.fill_key));
    }
    return found;
  }

  async importedActivityKeys(agentId: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const part of chunks(keys)) {
      const rows = this.rows(`SELECT activity_key FROM broker_activities WHERE agent_id = ? AND activity_key IN (${part.map(() => '?').join(', ')})`, agentId, ...part);
      for (const r of rows) found.add(String(r.activity_key));
    }
    return found;
  }

  async saveImportedActivities(rows: readonly ImportedActivity[]): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO broker_activities (agent_id, activity_key, connection_id, record_id) VALUES (?, ?, ?, ?)
      ON CONFLICT (agent_id, activity_key) DO NOTHING`);
    await this.store.writeTransaction(() => {
      for (const a of rows) insert.run(a.agentId, a.key, a.connectionId, a.recordId);
    });
  }

  async saveImportedFills(rows: readonly ImportedFill[]): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO broker_fills (agent_id, fill_key, connection_id, record_id, order_key, broker_order_id, symbol, side,
      quantity, cumulative_quantity, decision_id, link_method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, fill_key) DO NOTHING`);
    await this.store.writeTransaction(() => {
      for (const f of rows) {
        insert.run(f.agentId, f.key, f.connectionId, f.recordId, f.orderKey, f.brokerOrderId, f.symbol, f.side, f.quantity,
          f.cumulativeQuantity, f.decisionId, f.linkMethod);
      }
    });
  }

  async importedFillsOf(connectionId: string): Promise<Pick<ImportedFill, 'symbol' | 'side' | 'quantity'>[]> {
    // One row per fill: a SnapTrade fill is indexed under two keys, both pointing at its record.
    return this.rows(`SELECT symbol, side, quantity FROM broker_fills WHERE connection_id = ? AND fill_key IN
      (SELECT MIN(fill_key) FROM broker_fills WHERE connection_id = ? GROUP BY record_id)`, connectionId, connectionId)
      .map((r) => ({ symbol: String(r.symbol), side: String(r.side) as 'buy' | 'sell', quantity: String(r.quantity) }));
  }

  async cumulativeByOrder(agentId: string, brokerOrderIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const part of chunks([...new Set(brokerOrderIds)])) {
      const rows = this.rows(`SELECT broker_order_id, cumulative_quantity FROM broker_fills WHERE agent_id = ? AND cumulative_quantity IS NOT NULL
        AND broker_order_id IN (${part.map(() => '?').join(', ')})`, agentId, ...part);
      for (const r of rows) out.set(String(r.broker_order_id), [...(out.get(String(r.broker_order_id)) ?? []), String(r.cumulative_quantity)]);
    }
    return out;
  }

  async linkedOrderKeys(decisionIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const part of chunks([...new Set(decisionIds)])) {
      const rows = this.rows(`SELECT DISTINCT decision_id, order_key FROM broker_fills WHERE decision_id IN (${part.map(() => '?').join(', ')})`, ...part);
      for (const r of rows) out.set(String(r.decision_id), [...(out.get(String(r.decision_id)) ?? []), String(r.order_key)]);
    }
    return out;
  }

  async linkCounts(agentId: string): Promise<LinkCounts> {
    return linkCountsFromRows(this.rows(LINK_COUNTS, agentId));
  }

  async decisionByLinkToken(token: string): Promise<DecisionForLinking | null> {
    const [row] = this.rows("SELECT id, agent_id, symbol, recorded_at, content FROM records WHERE link_token = ? AND type = 'decision'", token);
    return row ? decisionFromRow(row) : null;
  }

  async decisionsBetween(agentId: string, fromMs: number, toMs: number): Promise<DecisionForLinking[]> {
    const { fromSortKey, toRecordedAt } = decisionRange(fromMs, toMs);
    return this.rows(`SELECT id, agent_id, symbol, recorded_at, content FROM records
      WHERE agent_id = ? AND sort_key >= ? AND type = 'decision' AND recorded_at <= ? ORDER BY sort_key`, agentId, fromSortKey, toRecordedAt).map(decisionFromRow);
  }

  async saveSnapshot(s: PositionSnapshot): Promise<void> {
    this.db.prepare(`INSERT INTO broker_snapshots (connection_id, agent_id, taken_at, positions, balances, reconciliation) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (connection_id, taken_at) DO NOTHING`)
      .run(s.connectionId, s.agentId, s.takenAt, JSON.stringify(s.positions), JSON.stringify(s.balances ?? null), JSON.stringify(s.reconciliation ?? null));
  }

  async latestSnapshot(connectionId: string): Promise<PositionSnapshot | null> {
    const [row] = this.rows('SELECT * FROM broker_snapshots WHERE connection_id = ? ORDER BY taken_at DESC LIMIT 1', connectionId);
    return row ? snapshotFromRow(row) : null;
  }

  async tryLockSync(connectionId: string): Promise<SyncLock | null> {
    const key = `${this.store.path}\n${connectionId}`;
    if (heldLocks.has(key)) return null;
    heldLocks.add(key);
    let released = false;
    return {
      release: async () => {
        if (!released) heldLocks.delete(key);
        released = true;
      },
    };
  }
}
