// Rows of the broker tables <-> the broker sub-port's types, shared by both adapters.
import { encodeTime } from 'ulid';
import type { BrokerConnection, BrokerUser, ConnectionPatch, DecisionForLinking, LinkCounts, PositionSnapshot } from '../brokers/port.ts';
import type { Row } from './rows.ts';

const json = <T>(text: unknown, fallback: T): T => (typeof text === 'string' && text !== '' ? (JSON.parse(text) as T) : fallback);
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function connectionFromRow(r: Row): BrokerConnection {
  return {
    id: String(r.id),
    agentId: String(r.agent_id),
    kind: String(r.kind) as BrokerConnection['kind'],
    environment: str(r.environment),
    status: String(r.status) as BrokerConnection['status'],
    credentials: r.credentials === null || r.credentials === undefined ? null : { sealed: String(r.credentials), keyVersion: Number(r.key_version) },
    accounts: json(r.accounts, []),
    externalId: str(r.external_id),
    cursor: json(r.cursor, {}),
    lastSync: json(r.last_sync, null),
    progress: json(r.progress, null),
    lastError: str(r.last_error),
    pendingState: r.state_hash === null || r.state_hash === undefined ? null : { hash: String(r.state_hash), expiresAt: String(r.state_expires_at) },
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
    disconnectedAt: str(r.disconnected_at),
  };
}

export const CONNECTION_COLUMNS = [
  'id', 'agent_id', 'kind', 'environment', 'status', 'credentials', 'key_version', 'accounts', 'external_id', 'cursor',
  'last_sync', 'progress', 'last_error', 'state_hash', 'state_expires_at', 'created_at', 'updated_at', 'disconnected_at',
] as const;

export function connectionParams(c: BrokerConnection): unknown[] {
  return [
    c.id, c.agentId, c.kind, c.environment, c.status, c.credentials?.sealed ?? null, c.credentials?.keyVersion ?? null,
    JSON.stringify(c.accounts), c.externalId, JSON.stringify(c.cursor), c.lastSync === null ? null : JSON.stringify(c.lastSync),
    c.progress === null ? null : JSON.stringify(c.progress), c.lastError, c.pendingState?.hash ?? null, c.pendingState?.expiresAt ?? null,
    c.createdAt, c.updatedAt, c.disconnectedAt,
  ];
}

/** The columns and values a patch sets (updated_at included). */
export function patchColumns(patch: ConnectionPatch, at: string): [string, unknown][] {
  const out: [string, unknown][] = [['updated_at', at]];
  const nullableJson = (v: unknown) => (v === null ? null : JSON.stringify(v));
  if (patch.status !== undefined) out.push(['status', patch.status]);
  if (patch.credentials !== undefined) {
    out.push(['credentials', patch.credentials?.sealed ?? null], ['key_version', patch.credentials?.keyVersion ?? null]);
  }
  if (patch.accounts !== undefined) out.push(['accounts', JSON.stringify(patch.accounts)]);
  if (patch.externalId !== undefined) out.push(['external_id', patch.externalId]);
  if (patch.cursor !== undefined) out.push(['cursor', JSON.stringify(patch.cursor)]);
  if (patch.lastSync !== undefined) out.push(['last_sync', nullableJson(patch.lastSync)]);
  if (patch.progress !== undefined) out.push(['progress', nullableJson(patch.progress)]);
  if (patch.lastError !== undefined) out.push(['last_error', patch.lastError]);
  if (patch.pendingState !== undefined) {
    out.push(['state_hash', patch.pendingState?.hash ?? null], ['state_expires_at', patch.pendingState?.expiresAt ?? null]);
  }
  if (patch.disconnectedAt !== undefined) out.push(['disconnected_at', patch.disconnectedAt]);
  return out;
}

export function userFromRow(r: Row): BrokerUser {
  return {
    agentId: String(r.agent_id), kind: String(r.kind) as BrokerUser['kind'], userId: String(r.user_id),
    secret: { sealed: String(r.secret), keyVersion: Number(r.key_version) }, createdAt: String(r.created_at),
  };
}

export function decisionFromRow(r: Row): DecisionForLinking {
  return { id: String(r.id), agentId: String(r.agent_id), symbol: str(r.symbol), recordedAt: String(r.recorded_at), content: String(r.content) };
}

export function snapshotFromRow(r: Row): PositionSnapshot {
  return {
    connectionId: String(r.connection_id), agentId: String(r.agent_id), takenAt: String(r.taken_at),
    positions: json(r.positions, []), balances: json(r.balances, null), reconciliation: json(r.reconciliation, null),
  };
}

/**
 * Bounds of records recorded in [fromMs, toMs]. A record's ULID time is never before its recorded_at
 * (ids only move forward, ledger/append.ts), so the sort key bounds the start (through the index)
 * and recorded_at the end.
 */
export function decisionRange(fromMs: number, toMs: number): { fromSortKey: string; toRecordedAt: string } {
  const clamp = (ms: number) => Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1);
  return { fromSortKey: encodeTime(clamp(fromMs), 10), toRecordedAt: new Date(clamp(toMs)).toISOString() };
}

/**
 * Imported executions by link method. A fill can be indexed under two keys (SnapTrade), both
 * pointing at its one record, so records are counted, not rows.
 */
export const LINK_COUNTS =
  'SELECT link_method, COUNT(DISTINCT record_id) AS n FROM broker_fills WHERE agent_id = ? AND link_method IS NOT NULL GROUP BY link_method';

export function linkCountsFromRows(rows: Row[]): LinkCounts {
  const counts: LinkCounts = { link_token: 0, inferred: 0 };
  for (const r of rows) {
    if (r.link_method === 'link_token' || r.link_method === 'inferred') counts[r.link_method] = Number(r.n);
  }
  return counts;
}
