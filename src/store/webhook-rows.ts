// Row <-> webhook type mapping shared by both adapters (their column names are the same).
import type { Row } from './rows.ts';
import type {
  AnchorEvent, CheckpointEvent, DeliveryAttempt, DisabledReason, EndpointStatus, LeafOwner, MessageStatus, WebhookEndpoint,
  WebhookEventType, WebhookMessage,
} from '../webhooks/port.ts';

const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const ENDPOINT_COLUMNS = ['id', 'agent_id', 'url', 'events', 'description', 'secret', 'key_version', 'status', 'disabled_reason', 'created_at', 'disabled_at'];

export function endpointParams(e: WebhookEndpoint): unknown[] {
  return [e.id, e.agentId, e.url, e.events.join(' '), e.description, e.secret.sealed, e.secret.keyVersion, e.status, e.disabledReason, e.createdAt, e.disabledAt];
}

export function endpointFromRow(r: Row): WebhookEndpoint {
  return {
    id: String(r.id),
    agentId: String(r.agent_id),
    url: String(r.url),
    events: String(r.events).split(' ').filter(Boolean) as WebhookEventType[],
    description: strOrNull(r.description),
    secret: { sealed: String(r.secret), keyVersion: Number(r.key_version) },
    status: String(r.status) as EndpointStatus,
    disabledReason: strOrNull(r.disabled_reason) as DisabledReason | null,
    createdAt: String(r.created_at),
    disabledAt: strOrNull(r.disabled_at),
  };
}

export function messageFromRow(r: Row): WebhookMessage {
  return {
    seq: Number(r.seq),
    id: String(r.id),
    endpointId: String(r.endpoint_id),
    agentId: String(r.agent_id),
    type: String(r.event_type) as WebhookEventType,
    subject: String(r.subject),
    payload: String(r.payload),
    status: String(r.status) as MessageStatus,
    attempts: Number(r.attempts),
    createdAt: String(r.created_at),
    firstAttemptAt: strOrNull(r.first_attempt_at),
    nextAttemptAt: strOrNull(r.next_attempt_at),
    deliveredAt: strOrNull(r.delivered_at),
  };
}

export function attemptFromRow(r: Row): DeliveryAttempt {
  return {
    messageId: String(r.message_id),
    endpointId: String(r.endpoint_id),
    attempt: Number(r.attempt),
    startedAt: String(r.started_at),
    durationMs: Number(r.duration_ms),
    statusCode: numOrNull(r.status_code),
    error: strOrNull(r.error),
  };
}

export function checkpointEventFromRow(r: Row): CheckpointEvent {
  return {
    treeSize: Number(r.tree_size),
    previousSize: Number(r.previous_size),
    root: new Uint8Array(r.root as Buffer),
    note: String(r.note),
    createdAt: String(r.created_at),
    lastSortKey: String(r.last_sort_key),
  };
}

export function anchorEventFromRow(r: Row): AnchorEvent {
  return {
    treeSize: Number(r.tree_size),
    root: String(r.root),
    blockHeight: numOrNull(r.block_height),
    blockHash: strOrNull(r.block_hash),
    blockTime: numOrNull(r.block_time),
    previousConfirmedSize: Number(r.previous_size ?? 0),
  };
}

export const leafOwnerFromRow = (r: Row): LeafOwner => ({ logIndex: Number(r.log_index), recordId: String(r.record_id), agentId: String(r.agent_id) });

/** Checkpoints after a tree size, each with the size before it and its last leaf's sort key ($1 / ?: size, then limit). */
export const CHECKPOINTS_AFTER_SQL = (p: (i: number) => string) => `
  SELECT c.tree_size, c.root, c.note, c.created_at,
    COALESCE((SELECT MAX(b.tree_size) FROM log_checkpoints b WHERE b.tree_size < c.tree_size), 0) AS previous_size,
    (SELECT l.sort_key FROM log_leaves l WHERE l.log_index = c.tree_size - 1) AS last_sort_key
  FROM log_checkpoints c WHERE c.tree_size > ${p(1)} ORDER BY c.tree_size LIMIT ${p(2)}`;

/** Confirmed anchors in (floor, maxSize] not yet announced (floor, maxSize, limit). */
export const UNANNOUNCED_ANCHORS_SQL = (p: (i: number) => string) => `
  SELECT a.tree_size, a.root, a.block_height, a.block_hash, a.block_time,
    COALESCE((SELECT MAX(b.tree_size) FROM log_anchors b WHERE b.status = 'confirmed' AND b.tree_size < a.tree_size), 0) AS previous_size
  FROM log_anchors a WHERE a.status = 'confirmed' AND a.tree_size > ${p(1)} AND a.tree_size <= ${p(2)}
    AND NOT EXISTS (SELECT 1 FROM webhook_anchors_seen s WHERE s.tree_size = a.tree_size)
  ORDER BY a.tree_size LIMIT ${p(3)}`;

/**
 * The oldest pending message of each active endpoint, due at ($1 / ?) now, limit. Driven by the
 * endpoints (CROSS JOIN keeps SQLite's loop order): one index probe each, whatever the outbox holds.
 */
export const DUE_HEADS_SQL = (p: (i: number) => string) => `
  SELECT m.* FROM (SELECT (SELECT h.seq FROM webhook_messages h WHERE h.endpoint_id = e.id AND h.status = 'pending' ORDER BY h.seq LIMIT 1) AS seq
      FROM webhook_endpoints e WHERE e.status = 'active') heads
  CROSS JOIN webhook_messages m
  WHERE m.seq = heads.seq AND m.next_attempt_at <= ${p(1)} ORDER BY m.next_attempt_at, m.seq LIMIT ${p(2)}`;
