// The Store port: everything the ledger keeps, behind one interface with a SQLite and a
// PostgreSQL adapter. Record tables are append-only: no method here updates or deletes a record.
import type { RecordType, SignatureEnvelope } from '../core/chain.ts';

export type AgentStatus = 'active' | 'paused' | 'retired';
export const AGENT_STATUSES: readonly AgentStatus[] = ['active', 'paused', 'retired'];

export type Agent = {
  id: string;
  handle: string;
  displayName: string | null;
  status: AgentStatus;
  demo: boolean;
  createdAt: string;
};

export type Scope = 'decisions:write' | 'decisions:read' | 'keys:write';
export const ALL_SCOPES: readonly Scope[] = ['decisions:write', 'decisions:read', 'keys:write'];

export type ApiKey = {
  id: string;
  agentId: string;
  /** The first characters of the secret, safe to show so an operator can tell keys apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
};

/** What authentication needs: the key and its agent, found by the secret's hash. */
export type KeyHolder = { key: ApiKey; secretHash: string; agent: Agent };

/** An agent's Ed25519 public key (raw 32 bytes, base64url). The service never holds a private key. */
export type SigningKey = {
  id: string;
  agentId: string;
  publicKey: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
};

export type ChainHead = { seq: number; hash: string; recordedAt: string | null };

/** A record as stored: the canonical content text and the members of its chain entry. */
export type StoredRecord = {
  id: string;
  agentId: string;
  agentHandle: string;
  type: RecordType;
  chainSeq: number;
  recordedAt: string;
  symbol: string | null;
  content: string;
  contentHash: string;
  prevHash: string;
  chainHash: string;
  signature: SignatureEnvelope | null;
  linkToken: string | null;
};

/**
 * A record waiting to be chained. Everything that does not depend on the chain position is
 * computed before the store is called; `chain` turns the position into the record's id,
 * timestamp and chain hash inside the store's transaction, where the agent's head is locked.
 */
export type PendingRecord = {
  agentId: string;
  agentHandle: string;
  type: RecordType;
  symbol: string | null;
  content: string;
  contentHash: string;
  signature: SignatureEnvelope | null;
  linkToken: string | null;
  idempotency: { key: string; fingerprint: string } | null;
  /** Builds the stored response from the chained record; kept with the idempotency key. */
  respond: (record: StoredRecord) => { status: number; body: string };
};

/** Turns a chain position into the record's identity; supplied by the ledger (clock + ids). */
export type ChainPositioner = (p: {
  pending: PendingRecord;
  seq: number;
  prevHash: string;
  prevRecordedAt: string | null;
  /** The newest record's sort key in the store (ULID): the new id must sort after it. */
  newestSortKey: string | null;
}) => { id: string; recordedAt: string; chainHash: string };

export type AppendOutcome =
  | { kind: 'recorded'; record: StoredRecord; response: { status: number; body: string } }
  /**
   * An earlier request recorded this idempotency key (a repeat, or a race between processes).
   * Checked before the signing key and the nonce, so a repeat is always reported as this.
   */
  | { kind: 'idempotency_conflict' }
  | { kind: 'nonce_used' }
  | { kind: 'agent_not_active' }
  /** The signing key was revoked (or is not the agent's) when the transaction looked: nothing recorded. */
  | { kind: 'key_revoked' };

export type IdempotentResult = {
  fingerprint: string;
  status: number;
  body: string;
};

export type Page = { limit: number; before?: string | undefined };

export interface LedgerStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** How many appendBatch calls may run at once (see ledger/commit-queue.ts). */
  readonly maxBatchesInFlight: number;
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;

  createAgent(agent: Agent, firstKey: ApiKey & { secretHash: string }): Promise<void>;
  findAgentByHandle(handle: string): Promise<Agent | null>;
  listAgents(): Promise<Agent[]>;
  setAgentStatus(agentId: string, status: AgentStatus): Promise<void>;

  createApiKey(key: ApiKey & { secretHash: string }): Promise<void>;
  findKeyHolder(secretHash: string): Promise<KeyHolder | null>;
  findApiKey(id: string): Promise<ApiKey | null>;
  listApiKeys(agentId?: string): Promise<ApiKey[]>;
  revokeApiKey(id: string, at: string): Promise<void>;

  /** Inserts the key, or returns the agent's existing key with the same public key. */
  createSigningKey(key: SigningKey): Promise<SigningKey>;
  findSigningKey(agentId: string, id: string): Promise<SigningKey | null>;
  listSigningKeys(agentId: string): Promise<SigningKey[]>;
  /**
   * Sets revoked_at once, under the agent's chain head lock, to the later of `at` and the agent's
   * latest recorded_at: every record the key signed stays valid ("not revoked before recorded_at").
   */
  revokeSigningKey(agentId: string, id: string, at: string): Promise<void>;

  findIdempotent(agentId: string, key: string): Promise<IdempotentResult | null>;
  /** Appends a batch in one durable transaction; outcomes are in the order of `batch`. */
  appendBatch(batch: PendingRecord[], position: ChainPositioner): Promise<AppendOutcome[]>;

  chainHead(agentId: string): Promise<ChainHead>;
  findRecord(id: string): Promise<StoredRecord | null>;
  /** The agent's records newest first, before the id `page.before` when given. */
  listAgentRecords(agentId: string, type: RecordType, page: Page): Promise<StoredRecord[]>;

  /** Whether a recorded decision of the agent already used this signature nonce. */
  isNonceUsed(agentId: string, nonce: string): Promise<boolean>;

  // Public reads (profile, chain, proof, ledger, export, transparency).
  findAgentById(id: string): Promise<Agent | null>;
  /** The agent's records in chain order: seq greater than `afterSeq`, at most `limit`. */
  listChain(agentId: string, afterSeq: number, limit: number): Promise<StoredRecord[]>;
  /** Every agent's records newest first by sort key (the ULID part of the id), filtered. */
  listLedger(query: LedgerQuery): Promise<StoredRecord[]>;
  /** Record counts of one agent, or of all agents when `agentId` is omitted. */
  countRecords(agentId?: string): Promise<RecordCounts>;
  /** Every agent with its chain head, by handle. */
  listHeads(): Promise<AgentHead[]>;
}

export type LedgerQuery = {
  limit: number;
  /** Only records whose sort key is below this one (the cursor). */
  beforeSortKey?: string | undefined;
  symbol?: string | undefined;
  agentId?: string | undefined;
  type?: RecordType | undefined;
  includeDemo: boolean;
};

export type RecordCounts = { total: number; signed: number; byType: Record<RecordType, number> };

export type AgentHead = { agent: Agent; head: ChainHead };
