// The webhook sub-port on SQLite: the same database file as the SqliteStore (its connection).
// One deliverer per database in this process (SQLite serves one process). Every write is an
// IMMEDIATE transaction whose WAL fsync runs off the event loop (SqliteStore.writeOffLoop, as for
// appends): at the deliverer's rate, an fsync per write on the JavaScript thread would stall every
// request. A fan-out is durable before anything it wrote is sent, and its WAL sync also covers
// every record it read, so nothing is ever delivered that a crash could take back.
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
import type { SqliteDatabase, SqliteStatement } from './driver.ts';
import type { SqliteHost } from './host.ts';

const q = () => '?';
/** Deliverer holds in this process, by database path. */
const held = new Set<string>();

function cursorFromRow(r: Row | undefined): FanOutCursor | null {
  return r ? { recordSortKey: String(r.record_sort_key), checkpointSize: Number(r.checkpoint_size), anchorFloor: Number(r.anchor_floor) } : null;
}

/** The attempts of `messageIds`, grouped by message, oldest first. */
function attemptsOf(db: SqliteDatabase, messageIds: string[]): Map<string, DeliveryAttempt[]> {
  const out = new Map<string, DeliveryAttempt[]>();
  if (messageIds.length === 0) return out;
  const rows = db.prepare(`SELECT * FROM webhook_attempts WHERE message_id IN (${messageIds.map(q).join(', ')}) ORDER BY message_id, attempt`)
    .all(...messageIds) as Row[];
  for (const r of rows.map(attemptFromRow)) out.set(r.messageId, [...(out.get(r.messageId) ?? []), r]);
  return out;
}

export class SqliteWebhookStore implements WebhookStore {
  constructor(private readonly store: SqliteHost) {}

  private get db(): SqliteDatabase {
    return this.store.db;
  }

  async createEndpoint(e: WebhookEndpoint): Promise<void> {
    const db = this.db;
    db.transaction(() => {
      db.prepare(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS.join(', ')}) VALUES (${ENDPOINT_COLUMNS.map(q).join(', ')})`).run(...endpointParams(e));
      db.prepare(`INSERT INTO webhook_cursor (id, record_sort_key, checkpoint_size, anchor_floor) VALUES (1,
          COALESCE((SELECT MAX(sort_key) FROM records), ''),
          COALESCE((SELECT MAX(tree_size) FROM log_checkpoints), 0),
          COALESCE((SELECT MAX(tree_size) FROM log_anchors), 0))
        ON CONFLICT (id) DO NOTHING`).run();
    }).immediate();
  }

  async findEndpoint(id: string): Promise<WebhookEndpoint | null> {
    const row = this.db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as Row | undefined;
    return row ? endpointFromRow(row) : null;
  }

  async listEndpoints(agentId: string): Promise<WebhookEndpoint[]> {
    return (this.db.prepare('SELECT * FROM webhook_endpoints WHERE agent_id = ? ORDER BY created_at, id').all(agentId) as Row[]).map(endpointFromRow);
  }

  async disableEndpoint(id: string, reason: DisabledReason, at: string): Promise<void> {
    this.db.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, disabled_at = ? WHERE id = ? AND status = 'active'").run(reason, at, id);
  }

  async resealSecrets(change: (endpointId: string, secret: Sealed) => Sealed | null): Promise<number> {
    let changed = 0;
    for (const e of await this.allEndpoints()) {
      const next = change(e.id, e.secret);
      if (!next) continue;
      this.db.prepare('UPDATE webhook_endpoints SET secret = ?, key_version = ? WHERE id = ?').run(next.sealed, next.keyVersion, e.id);
      changed++;
    }
    return changed;
  }

  private async allEndpoints(): Promise<WebhookEndpoint[]> {
    return (this.db.prepare('SELECT * FROM webhook_endpoints ORDER BY id').all() as Row[]).map(endpointFromRow);
  }

  async messages(endpointId: string, page: MessagePage): Promise<{ message: WebhookMessage; attempts: DeliveryAttempt[] }[]> {
    const rows = (page.beforeSeq === undefined
      ? this.db.prepare('SELECT * FROM webhook_messages WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?').all(endpointId, page.limit)
      : this.db.prepare('SELECT * FROM webhook_messages WHERE endpoint_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?').all(endpointId, page.beforeSeq, page.limit)) as Row[];
    const messages = rows.map(messageFromRow);
    const attempts = attemptsOf(this.db, messages.map((m) => m.id));
    return messages.map((message) => ({ message, attempts: attempts.get(message.id) ?? [] }));
  }

  async findMessage(id: string): Promise<WebhookMessage | null> {
    const row = this.db.prepare('SELECT * FROM webhook_messages WHERE id = ?').get(id) as Row | undefined;
    return row ? messageFromRow(row) : null;
  }

  async tryDeliverer(): Promise<WebhookSession | null> {
    const key = this.store.path;
    if (held.has(key)) return null;
    held.add(key);
    return new SqliteWebhookSession(this.store, () => held.delete(key));
  }
}

class SqliteWebhookSession implements WebhookSession {
  private released = false;
  /** Statements prepared once: the deliverer runs the same few many times a second. */
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(private readonly store: SqliteHost, private readonly onRelease: () => void) {}

  private get db(): SqliteDatabase {
    return this.store.db;
  }

  private prepare(sql: string): SqliteStatement {
    const known = this.statements.get(sql);
    if (known) return known;
    const statement = this.db.prepare(sql);
    this.statements.set(sql, statement);
    return statement;
  }

  private rows(sql: string, ...params: unknown[]): Row[] {
    if (this.released) throw new Error('the webhook deliverer session was released');
    return this.prepare(sql).all(...params) as Row[];
  }

  async cursor(): Promise<FanOutCursor | null> {
    return cursorFromRow(this.rows('SELECT * FROM webhook_cursor WHERE id = 1')[0]);
  }

  async activeEndpoints(): Promise<WebhookEndpoint[]> {
    return this.rows("SELECT * FROM webhook_endpoints WHERE status = 'active' ORDER BY id").map(endpointFromRow);
  }

  async recordsAfter(sortKey: string, limit: number): Promise<StoredRecord[]> {
    return this.rows(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id WHERE r.sort_key > ? ORDER BY r.sort_key LIMIT ?`, sortKey, limit)
      .map(recordFromRow);
  }

  async checkpointsAfter(treeSize: number, limit: number): Promise<CheckpointEvent[]> {
    return this.rows(CHECKPOINTS_AFTER_SQL(q), treeSize, limit).map(checkpointEventFromRow);
  }

  async leafOwners(from: number, to: number): Promise<LeafOwner[]> {
    return this.rows(`SELECT l.log_index, l.record_id, r.agent_id FROM log_leaves l JOIN records r ON r.id = l.record_id
      WHERE l.log_index >= ? AND l.log_index < ? ORDER BY l.log_index`, from, to).map(leafOwnerFromRow);
  }

  async unannouncedAnchors(floor: number, maxSize: number, limit: number): Promise<AnchorEvent[]> {
    return this.rows(UNANNOUNCED_ANCHORS_SQL(q), floor, maxSize, limit).map(anchorEventFromRow);
  }

  async latestLeafOf(agentId: string, treeSize: number): Promise<LeafOwner | null> {
    const [row] = this.rows(`SELECT l.log_index, l.record_id, r.agent_id FROM records r JOIN log_leaves l ON l.record_id = r.id
      WHERE r.agent_id = ? AND l.log_index < ? ORDER BY r.sort_key DESC LIMIT 1`, agentId, treeSize);
    return row ? leafOwnerFromRow(row) : null;
  }

  async fanOut(messages: readonly NewMessage[], cursor: FanOutCursor, announcedAnchors: readonly number[]): Promise<void> {
    await this.store.writeTransaction(() => {
      const insert = this.prepare(`INSERT INTO webhook_messages (id, endpoint_id, agent_id, event_type, subject, payload, status, created_at, next_attempt_at)
        VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (endpoint_id, event_type, subject) DO NOTHING`);
      for (const m of messages) insert.run(m.id, m.endpointId, m.agentId, m.type, m.subject, m.payload, m.createdAt, m.createdAt);
      const seen = this.prepare('INSERT INTO webhook_anchors_seen (tree_size) VALUES (?) ON CONFLICT (tree_size) DO NOTHING');
      for (const size of announcedAnchors) seen.run(size);
      this.prepare('UPDATE webhook_cursor SET record_sort_key = ?, checkpoint_size = ? WHERE id = 1').run(cursor.recordSortKey, cursor.checkpointSize);
    });
  }

  async headOf(endpointId: string): Promise<WebhookMessage | null> {
    const [row] = this.rows("SELECT * FROM webhook_messages WHERE endpoint_id = ? AND status = 'pending' ORDER BY seq LIMIT 1", endpointId);
    return row ? messageFromRow(row) : null;
  }

  async dueHeads(nowIso: string, limit: number, busy: ReadonlySet<string>): Promise<WebhookMessage[]> {
    return this.rows(DUE_HEADS_SQL(q), nowIso, limit + busy.size).map(messageFromRow).filter((m) => !busy.has(m.endpointId)).slice(0, limit);
  }

  async recordAttempt(a: DeliveryAttempt, outcome: AttemptOutcome): Promise<void> {
    await this.store.writeTransaction(() => {
      this.prepare(`INSERT INTO webhook_attempts (message_id, attempt, endpoint_id, started_at, duration_ms, status_code, error) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (message_id, attempt) DO NOTHING`).run(a.messageId, a.attempt, a.endpointId, a.startedAt, a.durationMs, a.statusCode, a.error);
      const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
      const deliveredAt = outcome.status === 'delivered' ? outcome.at : null;
      this.prepare(`UPDATE webhook_messages SET status = ?, attempts = ?, first_attempt_at = COALESCE(first_attempt_at, ?), next_attempt_at = ?, delivered_at = ?
        WHERE id = ? AND status = 'pending'`).run(outcome.status, a.attempt, a.startedAt, next, deliveredAt, a.messageId);
      if (outcome.status === 'failed' && outcome.disableEndpoint) {
        this.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', disabled_at = ? WHERE id = ? AND status = 'active'")
          .run(outcome.at, a.endpointId);
      }
    }, false);
  }

  async prune(beforeIso: string, limit: number): Promise<number> {
    const db = this.db;
    return this.store.writeTransaction(() => {
      const ids = (this.prepare("SELECT id FROM webhook_messages WHERE status <> 'pending' AND created_at < ? LIMIT ?").all(beforeIso, limit) as Row[]).map((r) => String(r.id));
      if (ids.length === 0) return 0;
      const list = ids.map(q).join(', ');
      db.prepare(`DELETE FROM webhook_attempts WHERE message_id IN (${list})`).run(...ids);
      db.prepare(`DELETE FROM webhook_messages WHERE id IN (${list})`).run(...ids);
      return ids.length;
    });
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.onRelease();
  }
}
