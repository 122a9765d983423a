// The webhook sub-port on PostgreSQL: the same pool and schema as the PostgresStore. The
// deliverer's hold is a session advisory lock on a connection of its own (as the log
// integrator's): one deliverer at a time across every API node, and when the holder dies its
// lock goes with its session and another node takes over. Every read and write of the session
// runs on that connection, one after another, so a node that lost its lock cannot write.
import pg from 'pg';
import { RECORD_COLUMNS, recordFromRow, type Row } from '../rows.ts';
import type { Sealed, StoredRecord } from '../../domain/types.ts';
import type {
  AnchorEvent, AttemptOutcome, CheckpointEvent, DeliveryAttempt, DisabledReason, FanOutCursor, LeafOwner, MessagePage, NewMessage,
  WebhookEndpoint, WebhookMessage, WebhookSession, WebhookStore,
} from '../../webhooks/port.ts';
import {
  anchorEventFromRow, attemptFromRow, checkpointEventFromRow, CHECKPOINTS_AFTER_SQL, DUE_HEADS_SQL, ENDPOINT_COLUMNS, endpointFromRow,
  endpointParams, leafOwnerFromRow, messageFromRow, UNANNOUNCED_ANCHORS_SQL,
} from '../webhook-rows.ts';
import { takeSessionLock } from './session-lock.ts';
import type { PostgresHost } from './pool.ts';

const $ = (i: number) => `$${i}`;

/** The session advisory lock the deliverer holds (hashed with hashtext). */
export const delivererLockKey = (schema: string) => `ledger-webhooks:${schema}`;

const INIT_CURSOR = `INSERT INTO webhook_cursor (id, record_sort_key, checkpoint_size, anchor_floor) VALUES (1,
    COALESCE((SELECT MAX(sort_key) FROM records), ''),
    COALESCE((SELECT MAX(tree_size) FROM log_checkpoints), 0),
    COALESCE((SELECT MAX(tree_size) FROM log_anchors), 0))
  ON CONFLICT (id) DO NOTHING`;

export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly store: PostgresHost) {}

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.store.pool.query(sql, params)).rows as Row[];
  }

  async createEndpoint(e: WebhookEndpoint): Promise<void> {
    await this.store.pool.transaction(async (client) => {
      await client.query(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS.join(', ')}) VALUES (${ENDPOINT_COLUMNS.map((_, i) => $(i + 1)).join(', ')})`, endpointParams(e));
      await client.query(INIT_CURSOR);
    });
  }

  async findEndpoint(id: string): Promise<WebhookEndpoint | null> {
    const [row] = await this.q('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
    return row ? endpointFromRow(row) : null;
  }

  async listEndpoints(agentId: string): Promise<WebhookEndpoint[]> {
    return (await this.q('SELECT * FROM webhook_endpoints WHERE agent_id = $1 ORDER BY created_at, id', [agentId])).map(endpointFromRow);
  }

  async disableEndpoint(id: string, reason: DisabledReason, at: string): Promise<void> {
    await this.q("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $1, disabled_at = $2 WHERE id = $3 AND status = 'active'", [reason, at, id]);
  }

  async resealSecrets(change: (endpointId: string, secret: Sealed) => Sealed | null): Promise<number> {
    let changed = 0;
    for (const e of (await this.q('SELECT * FROM webhook_endpoints ORDER BY id')).map(endpointFromRow)) {
      const next = change(e.id, e.secret);
      if (!next) continue;
      await this.q('UPDATE webhook_endpoints SET secret = $1, key_version = $2 WHERE id = $3', [next.sealed, next.keyVersion, e.id]);
      changed++;
    }
    return changed;
  }

  async messages(endpointId: string, page: MessagePage): Promise<{ message: WebhookMessage; attempts: DeliveryAttempt[] }[]> {
    const rows = page.beforeSeq === undefined
      ? await this.q('SELECT * FROM webhook_messages WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2', [endpointId, page.limit])
      : await this.q('SELECT * FROM webhook_messages WHERE endpoint_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3', [endpointId, page.beforeSeq, page.limit]);
    const messages = rows.map(messageFromRow);
    const attempts = new Map<string, DeliveryAttempt[]>();
    if (messages.length > 0) {
      const found = await this.q('SELECT * FROM webhook_attempts WHERE message_id = ANY($1::text[]) ORDER BY message_id, attempt', [messages.map((m) => m.id)]);
      for (const a of found.map(attemptFromRow)) attempts.set(a.messageId, [...(attempts.get(a.messageId) ?? []), a]);
    }
    return messages.map((message) => ({ message, attempts: attempts.get(message.id) ?? [] }));
  }

  async findMessage(id: string): Promise<WebhookMessage | null> {
    const [row] = await this.q('SELECT * FROM webhook_messages WHERE id = $1', [id]);
    return row ? messageFromRow(row) : null;
  }

  async tryDeliverer(): Promise<WebhookSession | null> {
    // Bounded like the pool's queries: a silent database costs an error (and the hold), never a hung deliverer.
    const client = new pg.Client({
      connectionString: this.store.pool.options.connectionString, options: `-c search_path=${this.store.schema}`,
      connectionTimeoutMillis: 5_000, query_timeout: 30_000, statement_timeout: 25_000, idle_in_transaction_session_timeout: 10_000,
    });
    const session = new PostgresWebhookSession(client);
    client.on('error', () => session.lose());
    if (!(await takeSessionLock(client, delivererLockKey(this.store.schema)))) return null;
    try {
      // Attempt logs commit without waiting for the WAL flush; fan-outs and prunes say otherwise.
      await client.query('SET synchronous_commit = off');
      return session;
    } catch {
      await client.end().catch(() => undefined);
      return null;
    }
  }
}

class PostgresWebhookSession implements WebhookSession {
  private lost = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly client: pg.Client) {}

  lose(): void {
    this.lost = true;
  }

  /** Runs `work` on the session's connection after everything queued before it. */
  private exclusive<T>(work: (q: (sql: string, params?: unknown[]) => Promise<Row[]>) => Promise<T>): Promise<T> {
    const run = async () => {
      if (this.lost) throw new Error('the webhook deliverer lock connection is gone');
      return work(async (sql, params = []) => (await this.client.query(sql, params)).rows as Row[]);
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.exclusive((q) => q(sql, params));
  }

  /** A durable transaction (synchronous_commit on for it, whatever the session's default). */
  private transaction(work: (q: (sql: string, params?: unknown[]) => Promise<Row[]>) => Promise<void>): Promise<void> {
    return this.exclusive(async (q) => {
      await q('BEGIN; SET LOCAL synchronous_commit = on');
      try {
        await work(q);
        await q('COMMIT');
      } catch (err) {
        if (!this.lost) await this.client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  async cursor(): Promise<FanOutCursor | null> {
    const [r] = await this.rows('SELECT * FROM webhook_cursor WHERE id = 1');
    return r ? { recordSortKey: String(r.record_sort_key), checkpointSize: Number(r.checkpoint_size), anchorFloor: Number(r.anchor_floor) } : null;
  }

  async activeEndpoints(): Promise<WebhookEndpoint[]> {
    return (await this.rows("SELECT * FROM webhook_endpoints WHERE status = 'active' ORDER BY id")).map(endpointFromRow);
  }

  async recordsAfter(sortKey: string, limit: number): Promise<StoredRecord[]> {
    return (await this.rows(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id WHERE r.sort_key > $1 ORDER BY r.sort_key LIMIT $2`,
      [sortKey, limit])).map(recordFromRow);
  }

  async checkpointsAfter(treeSize: number, limit: number): Promise<CheckpointEvent[]> {
    return (await this.rows(CHECKPOINTS_AFTER_SQL($), [treeSize, limit])).map(checkpointEventFromRow);
  }

  async leafOwners(from: number, to: number): Promise<LeafOwner[]> {
    return (await this.rows(`SELECT l.log_index, l.record_id, r.agent_id FROM log_leaves l JOIN records r ON r.id = l.record_id
      WHERE l.log_index >= $1 AND l.log_index < $2 ORDER BY l.log_index`, [from, to])).map(leafOwnerFromRow);
  }

  async unannouncedAnchors(floor: number, maxSize: number, limit: number): Promise<AnchorEvent[]> {
    return (await this.rows(UNANNOUNCED_ANCHORS_SQL($), [floor, maxSize, limit])).map(anchorEventFromRow);
  }

  async latestLeafOf(agentId: string, treeSize: number): Promise<LeafOwner | null> {
    const [row] = await this.rows(`SELECT l.log_index, l.record_id, r.agent_id FROM records r JOIN log_leaves l ON l.record_id = r.id
      WHERE r.agent_id = $1 AND l.log_index < $2 ORDER BY l.log_index DESC LIMIT 1`, [agentId, treeSize]);
    return row ? leafOwnerFromRow(row) : null;
  }

  async fanOut(messages: readonly NewMessage[], cursor: FanOutCursor, announcedAnchors: readonly number[]): Promise<void> {
    const col = <K extends keyof NewMessage>(k: K) => messages.map((m) => m[k]);
    await this.transaction(async (q) => {
      if (messages.length > 0) {
        // unnest keeps the array order, and so the identity (seq) follows the fan-out order.
        await q(`INSERT INTO webhook_messages (id, endpoint_id, agent_id, event_type, subject, payload, status, created_at, next_attempt_at)
          SELECT id, endpoint_id, agent_id, event_type, subject, payload, 'pending', created_at, created_at
          FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY
            AS m(id, endpoint_id, agent_id, event_type, subject, payload, created_at, n)
          ORDER BY n
          ON CONFLICT (endpoint_id, event_type, subject) DO NOTHING`,
        [col('id'), col('endpointId'), col('agentId'), col('type'), col('subject'), col('payload'), col('createdAt')]);
      }
      if (announcedAnchors.length > 0) {
        await q('INSERT INTO webhook_anchors_seen (tree_size) SELECT * FROM unnest($1::bigint[]) ON CONFLICT (tree_size) DO NOTHING', [[...announcedAnchors]]);
      }
      await q('UPDATE webhook_cursor SET record_sort_key = $1, checkpoint_size = $2 WHERE id = 1', [cursor.recordSortKey, cursor.checkpointSize]);
    });
  }

  async headOf(endpointId: string): Promise<WebhookMessage | null> {
    const [row] = await this.rows("SELECT * FROM webhook_messages WHERE endpoint_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1", [endpointId]);
    return row ? messageFromRow(row) : null;
  }

  async dueHeads(nowIso: string, limit: number, busy: ReadonlySet<string>): Promise<WebhookMessage[]> {
    const rows = await this.rows(DUE_HEADS_SQL($), [nowIso, limit + busy.size]);
    return rows.map(messageFromRow).filter((m) => !busy.has(m.endpointId)).slice(0, limit);
  }

  async recordAttempt(a: DeliveryAttempt, outcome: AttemptOutcome): Promise<void> {
    const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
    const deliveredAt = outcome.status === 'delivered' ? outcome.at : null;
    const disableAt = outcome.status === 'failed' && outcome.disableEndpoint ? outcome.at : null;
    // One statement (so one round trip on the shared connection), atomic as any statement is; the
    // session commits without waiting for the WAL flush (synchronous_commit off, see tryDeliverer).
    await this.rows(`WITH attempt AS (
        INSERT INTO webhook_attempts (message_id, attempt, endpoint_id, started_at, duration_ms, status_code, error) VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (message_id, attempt) DO NOTHING),
      message AS (
        UPDATE webhook_messages SET status = $8, attempts = $2, first_attempt_at = COALESCE(first_attempt_at, $4), next_attempt_at = $9, delivered_at = $10
        WHERE id = $1 AND status = 'pending')
      UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', disabled_at = $11
      WHERE $11::text IS NOT NULL AND id = $3 AND status = 'active'`,
    [a.messageId, a.attempt, a.endpointId, a.startedAt, a.durationMs, a.statusCode, a.error, outcome.status, next, deliveredAt, disableAt]);
  }

  async prune(beforeIso: string, limit: number): Promise<number> {
    let count = 0;
    await this.transaction(async (q) => {
      const ids = (await q("SELECT id FROM webhook_messages WHERE status <> 'pending' AND created_at < $1 LIMIT $2", [beforeIso, limit])).map((r) => String(r.id));
      count = ids.length;
      if (count === 0) return;
      await q('DELETE FROM webhook_attempts WHERE message_id = ANY($1::text[])', [ids]);
      await q('DELETE FROM webhook_messages WHERE id = ANY($1::text[])', [ids]);
    });
    return count;
  }

  async release(): Promise<void> {
    this.lost = true;
    await this.queue.catch(() => undefined);
    // Closing the connection ends the session, which frees its advisory lock.
    await this.client.end().catch(() => undefined);
  }
}
