// The Store port: everything the ledger keeps, behind one interface with a SQLite and a
// PostgreSQL adapter. Record tables are append-only: no method here updates or deletes a record.
import type { RecordType } from '../core/chain.ts';
import type { LogStore } from '../log/port.ts';
import type { AnchorStore } from '../anchor/port.ts';
import type { CosignatureStore } from '../log/port.ts';
import type { WebhookStore } from '../webhooks/port.ts';
import type { BrokerStore } from '../brokers/port.ts';
import type { VaultStore } from '../vault/port.ts';
import type { DirectoryStore } from '../directory/port.ts';
import type { SiteStore } from '../site/port.ts';
import type { MarketStore } from '../market/port.ts';
import type { PerformanceStore } from '../performance/port.ts';
import type {
  Agent, AgentHead, AgentStatus, ApiKey, ChainHead, KeyHolder, RecordCounts, SigningKey, StoredRecord,
} from '../domain/types.ts';
import type { StoreGauges } from '../domain/store-health.ts';

export { StoreUnavailable, type StoreGauges } from '../domain/store-health.ts';

/** An (agent, value) pair: idempotency keys, signing key ids and nonces are all per agent. */
export type AgentValue = { agentId: string; value: string };

/** What an append asks the store before planning: gathered in one go, inside its transaction. */
export type AppendQuestions = {
  agentIds: string[];
  idempotencyKeys: AgentValue[];
  signingKeyIds: AgentValue[];
  nonces: AgentValue[];
};

export type HeadFact = { seq: number; hash: string; recordedAt: string | null; active: boolean };

/**
 * The answers, read after the agents' chain heads are locked (every append and every key
 * revocation of those agents takes the same locks), so they hold until the transaction ends.
 * Sets hold `agentValueKey` strings.
 */
export type AppendFacts = {
  heads: ReadonlyMap<string, HeadFact>;
  usedIdempotencyKeys: ReadonlySet<string>;
  usableSigningKeys: ReadonlySet<string>;
  usedNonces: ReadonlySet<string>;
  /** The newest record's sort key in the store (ULID): new ids must sort after it. */
  newestSortKey: string | null;
};

export const agentValueKey = (agentId: string, value: string) => `${agentId}\n${value}`;

export type AddedCounts = { decision: number; execution: number; activity: number; signed: number };

/** Everything an append writes; the store writes exactly these rows and nothing else. */
export type AppendRows = {
  records: StoredRecord[];
  idempotencyKeys: { agentId: string; key: string; fingerprint: string; recordId: string; status: number; createdAt: string }[];
  nonces: { agentId: string; nonce: string; recordId: string }[];
  heads: { agentId: string; seq: number; hash: string; recordedAt: string; added: AddedCounts }[];
};

/** Planned from the facts by the ledger (ledger/append.ts); `result` is handed back to it. */
export type AppendPlan<T> = { rows: AppendRows; result: T };

export type IdempotentResult = {
  fingerprint: string;
  status: number;
  /** The response body stored with the key; null when it is rendered again from `record`. */
  body: string | null;
  record: StoredRecord | null;
};

export type Page = { limit: number; before?: string | undefined };

/** The wings' storage ports, each kept by both adapters (declared once here; the adapters merge it). */
export type WingStores = {
  /** The global log's storage (log/port.ts). */
  readonly log: LogStore;
  /** Bitcoin anchors of the log's checkpoints (anchor/port.ts). */
  readonly anchors: AnchorStore;
  /** Witness cosignatures of the log's checkpoints (log/port.ts). */
  readonly cosignatures: CosignatureStore;
  /** The webhooks wing's endpoints and outbox (webhooks/port.ts). */
  readonly webhooks: WebhookStore;
  /** The vault's key checks and sealed samples (vault/port.ts). */
  readonly vault: VaultStore;
  /** The broker wing's connections, imported fills and snapshots (brokers/port.ts). */
  readonly brokers: BrokerStore;
  /** The directory wing's board of agent headlines (directory/port.ts). */
  readonly directory: DirectoryStore;
  /** The site wing's reads beyond the public ones (site/port.ts). */
  readonly site: SiteStore;
  /** The market wing's observations, closes and corporate actions (market/port.ts). */
  readonly market: MarketStore;
  /** The performance wing's stored reports (performance/port.ts), kept by the market adapters. */
  readonly performance: PerformanceStore;
};

export interface LedgerStore extends WingStores {
  /** How many appendBatch calls may run at once (see ledger/commit-queue.ts). */
  readonly maxBatchesInFlight: number;
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  /** What the metrics show of the store (api/metrics.ts): cheap counters read at each scrape. */
  gauges(): StoreGauges;

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
  /**
   * One durable transaction: lock the heads of `questions.agentIds`, gather the facts, call
   * `plan` once (synchronously), write its rows, commit. Throws (and writes nothing) on failure.
   */
  appendBatch<T>(questions: AppendQuestions, plan: (facts: AppendFacts) => AppendPlan<T>): Promise<T>;

  chainHead(agentId: string): Promise<ChainHead>;
  findRecord(id: string): Promise<StoredRecord | null>;
  /** The agent's records newest first, before the id `page.before` when given. */
  listAgentRecords(agentId: string, type: RecordType, page: Page): Promise<StoredRecord[]>;

  /** Whether a recorded decision of the agent already used this signature nonce. */
  isNonceUsed(agentId: string, nonce: string): Promise<boolean>;

  // Public reads (profile, chain, proof, ledger, export, transparency).
  findAgentById(id: string): Promise<Agent | null>;
  /**
   * The agent's records in chain order: seq greater than `afterSeq`, at most `limit`. With
   * `maxBytes`, they end with the record whose content takes their total past it (so at least
   * one): what is read is bounded by the budget plus one record, however large the records.
   */
  listChain(agentId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<StoredRecord[]>;
  /**
   * Every agent's records newest first by sort key (the ULID part of the id), filtered. With
   * `maxBytes`, they end with the record whose content takes their total past it, as listChain's.
   */
  listLedger(query: LedgerQuery): Promise<StoredRecord[]>;
  /** Record counts of one agent, or of all agents when `agentId` is omitted. */
  countRecords(agentId?: string): Promise<RecordCounts>;
  /** Every agent with its chain head, by handle. */
  listHeads(): Promise<AgentHead[]>;
  /**
   * The newest record's sort key (the ULID part of its id), or null when there is none. Ids follow
   * commit order, so a store (a replica) whose newest key is K holds every record with a key below K.
   */
  newestSortKey(): Promise<string | null>;
}

export type LedgerQuery = {
  limit: number;
  /** Only records whose sort key is below this one (the cursor). */
  beforeSortKey?: string | undefined;
  symbol?: string | undefined;
  agentId?: string | undefined;
  type?: RecordType | undefined;
  includeDemo: boolean;
  /** Content bytes to read at most, plus the record that passes them (at least one record). */
  maxBytes?: number | undefined;
};



