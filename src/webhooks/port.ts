// The webhooks wing's storage port: what it keeps beside the records, with a SQLite and a
// PostgreSQL adapter (store/sqlite/webhooks.ts, store/postgres/webhooks.ts) over the same
// database. Owns the agents' endpoints (their signing secret only ever sealed by the vault), the
// outbox of messages (one per endpoint and event, in fan-out order: `seq`), each message's
// delivery attempts, and the fan-out cursor. Records, checkpoints and anchors are only read.
//
// The deliverer works through a session (`tryDeliverer`): one holder at a time (PostgreSQL: a
// session advisory lock on a connection of its own, freed when the holder dies; SQLite: one
// holder per database in this process, SQLite serving one process).
import type { Sealed, StoredRecord } from '../domain/types.ts';

export const WEBHOOK_EVENT_TYPES = ['decision.recorded', 'execution.recorded', 'activity.recorded', 'checkpoint.published', 'anchor.confirmed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export type EndpointStatus = 'active' | 'disabled';
/** Why an endpoint stopped: the agent disabled it, or a message failed for the whole retry schedule. */
export type DisabledReason = 'disabled_by_agent' | 'failing';

export type WebhookEndpoint = {
  id: string;
  agentId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  /** `whsec_...` sealed by the vault, with the endpoint id as associated data. */
  secret: Sealed;
  status: EndpointStatus;
  disabledReason: DisabledReason | null;
  createdAt: string;
  disabledAt: string | null;
};

export type MessageStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint. `id` is the `webhook-id` every attempt carries. */
export type WebhookMessage = {
  seq: number;
  id: string;
  endpointId: string;
  agentId: string;
  type: WebhookEventType;
  /** What the event is about: a record id, or a tree size. Unique per (endpoint, type). */
  subject: string;
  /** The JSON body, exactly as sent and signed. */
  payload: string;
  status: MessageStatus;
  attempts: number;
  createdAt: string;
  firstAttemptAt: string | null;
  /** When the next attempt is due (pending messages only). */
  nextAttemptAt: string | null;
  deliveredAt: string | null;
};

export type NewMessage = Pick<WebhookMessage, 'id' | 'endpointId' | 'agentId' | 'type' | 'subject' | 'payload' | 'createdAt'>;

export type DeliveryAttempt = {
  messageId: string;
  endpointId: string;
  attempt: number;
  startedAt: string;
  durationMs: number;
  /** The receiver's HTTP status; null when no answer came (refused, timed out, unreachable). */
  statusCode: number | null;
  error: string | null;
};

/** The message after an attempt: delivered, failed for good, or pending until `nextAttemptAt`. */
export type AttemptOutcome =
  | { status: 'delivered'; at: string }
  | { status: 'pending'; nextAttemptAt: string }
  | { status: 'failed'; at: string; disableEndpoint: boolean };

/** How far the fan-out has read each source. */
export type FanOutCursor = {
  /** Records with a larger sort key are still to fan out. */
  recordSortKey: string;
  /** Checkpoints with a larger tree size are still to fan out. */
  checkpointSize: number;
  /** Confirmed anchors at or below this tree size are never announced (they predate webhooks). */
  anchorFloor: number;
};

export type CheckpointEvent = { treeSize: number; previousSize: number; root: Uint8Array; note: string; createdAt: string;
  /** The sort key of the checkpoint's last leaf: it is fanned out only once its records are. */
  lastSortKey: string };

export type AnchorEvent = { treeSize: number; root: string; blockHeight: number | null; blockHash: string | null; blockTime: number | null;
  /** The largest confirmed anchor below this one (0 when none). */
  previousConfirmedSize: number };

export type LeafOwner = { logIndex: number; recordId: string; agentId: string };

export type MessagePage = { limit: number; beforeSeq?: number | undefined };

export interface WebhookSession {
  /** Null until the first endpoint was created: nothing to fan out before that. */
  cursor(): Promise<FanOutCursor | null>;
  /** Every active endpoint. */
  activeEndpoints(): Promise<WebhookEndpoint[]>;
  recordsAfter(sortKey: string, limit: number): Promise<StoredRecord[]>;
  checkpointsAfter(treeSize: number, limit: number): Promise<CheckpointEvent[]>;
  /** The leaves at log indexes [from, to) with the agent each record belongs to. */
  leafOwners(from: number, to: number): Promise<LeafOwner[]>;
  /** Confirmed anchors above the floor and at most `maxSize`, not yet fanned out, smallest first. */
  unannouncedAnchors(floor: number, maxSize: number, limit: number): Promise<AnchorEvent[]>;
  /** The agent's newest record with a log index below `treeSize`. */
  latestLeafOf(agentId: string, treeSize: number): Promise<LeafOwner | null>;
  /**
   * One transaction: inserts the messages (one already there for the same endpoint, type and
   * subject is kept), marks the anchors announced, and moves the cursor.
   */
  fanOut(messages: readonly NewMessage[], cursor: FanOutCursor, announcedAnchors: readonly number[]): Promise<void>;
  /** The endpoint's oldest pending message, whether due or not. */
  headOf(endpointId: string): Promise<WebhookMessage | null>;
  /** The oldest pending message of each active endpoint, when it is due at `nowIso`; at most `limit`, none of `busy`. */
  dueHeads(nowIso: string, limit: number, busy: ReadonlySet<string>): Promise<WebhookMessage[]>;
  /**
   * One transaction: the attempt in the log, the message's new state, and the endpoint disabled
   * when asked. It may answer before it is durable (no fsync waited for): a crash of the machine
   * or the database can forget it, and the message is then sent again (at least once).
   */
  recordAttempt(attempt: DeliveryAttempt, outcome: AttemptOutcome): Promise<void>;
  /** Deletes delivered and failed messages (and their attempts) created before `beforeIso`; answers how many. */
  prune(beforeIso: string, limit: number): Promise<number>;
  release(): Promise<void>;
}

export interface WebhookStore {
  /**
   * Inserts the endpoint; the first one ever also starts the fan-out cursor at the newest record,
   * checkpoint and anchor (in the same transaction), so history is never announced.
   */
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  findEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** The agent's endpoints, oldest first. */
  listEndpoints(agentId: string): Promise<WebhookEndpoint[]>;
  /** Sets the endpoint disabled once (a disabled endpoint is left as it is). */
  disableEndpoint(id: string, reason: DisabledReason, at: string): Promise<void>;
  /** Re-seals every endpoint secret the function changes (master key rotation); answers how many changed. */
  resealSecrets(change: (endpointId: string, secret: Sealed) => Sealed | null): Promise<number>;
  /** The endpoint's messages, newest first, with their attempts oldest first. */
  messages(endpointId: string, page: MessagePage): Promise<{ message: WebhookMessage; attempts: DeliveryAttempt[] }[]>;
  findMessage(id: string): Promise<WebhookMessage | null>;
  /** The deliverer's hold, or null while another process holds it. */
  tryDeliverer(): Promise<WebhookSession | null>;
}
