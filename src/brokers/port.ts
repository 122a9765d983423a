// The broker wing's storage port: what it keeps beside the records, with a SQLite and a PostgreSQL
// adapter (store/{sqlite,postgres}/brokers.ts) over the same database as the LedgerStore. Owns
// connections (credentials only ever sealed by the vault), the SnapTrade user of each agent, the
// index of imported fills (which fill became which execution record, and the link it carries), the
// index of imported non-trade activities, position snapshots, the reads linking needs, and
// one-sync-per-connection locks. Execution records themselves are written only through the append
// protocol.
import type { Sealed } from '../domain/types.ts';

export type BrokerKind = 'alpaca' | 'snaptrade';
export type ConnectionStatus = 'pending' | 'active' | 'error' | 'disconnected';

/** An account of a connection as the service shows it: the broker's id, never its number. */
export type BrokerAccount = { ref: string; name: string | null; currency: string | null; institution: string | null };

export type SyncCounts = {
  fills_read: number;
  executions_recorded: number;
  already_recorded: number;
  orders_read: number;
  linked_link_token: number;
  linked_inferred: number;
  /** SnapTrade activities that are not fills (dividends, transfers...), by type. */
  not_fills: Record<string, number>;
  /** Non-trade activities read, and recorded as `activity` records (each once). */
  activities_read: number;
  activities_recorded: number;
};

export type SyncSummary = {
  started_at: string;
  finished_at: string;
  ok: boolean;
  counts: SyncCounts;
  positions: number;
  /** Mismatches between reported and implied positions, cumulative-quantity problems, skipped rows. */
  caveats: { code: string; message: string }[];
  error: { kind: string; message: string } | null;
};

export type SyncProgress = { started_at: string; phase: string; fills_read: number; executions_recorded: number };

/** Where the next sync starts, per broker (opaque to the store). */
export type SyncCursor = Record<string, string | null>;

export type BrokerConnection = {
  id: string;
  agentId: string;
  kind: BrokerKind;
  environment: string | null;
  status: ConnectionStatus;
  credentials: Sealed | null;
  accounts: BrokerAccount[];
  /** SnapTrade's authorization id once the portal completed. */
  externalId: string | null;
  cursor: SyncCursor;
  lastSync: SyncSummary | null;
  progress: SyncProgress | null;
  lastError: string | null;
  /** sha256 of the single-use state token of a pending portal link, and when it expires. */
  pendingState: { hash: string; expiresAt: string } | null;
  createdAt: string;
  updatedAt: string;
  disconnectedAt: string | null;
};

export type ConnectionPatch = Partial<Pick<BrokerConnection,
  'status' | 'credentials' | 'accounts' | 'externalId' | 'cursor' | 'lastSync' | 'progress' | 'lastError' | 'pendingState' | 'disconnectedAt'>>;

/** The SnapTrade user registered for an agent (once), its secret sealed. */
export type BrokerUser = { agentId: string; kind: BrokerKind; userId: string; secret: Sealed; createdAt: string };

/** One imported non-trade activity: a key it is known by, and the `activity` record it became. */
export type ImportedActivity = { agentId: string; key: string; connectionId: string; recordId: string };

/** One imported fill: keys it is known by, the record it became, and its link. */
export type ImportedFill = {
  agentId: string;
  key: string;
  connectionId: string;
  recordId: string;
  orderKey: string;
  brokerOrderId: string | null;
  symbol: string;
  side: 'buy' | 'sell';
  quantity: string;
  cumulativeQuantity: string | null;
  decisionId: string | null;
  linkMethod: string | null;
};

export type LinkCounts = { link_token: number; inferred: number };

/** What linking needs of a decision. */
export type DecisionForLinking = { id: string; agentId: string; symbol: string | null; recordedAt: string; content: string };

export type PositionSnapshot = {
  connectionId: string;
  agentId: string;
  takenAt: string;
  /** As the broker reported them, and the comparison with the imported fills. */
  positions: unknown;
  balances: unknown;
  reconciliation: unknown;
};

export type SyncLock = { release(): Promise<void> };

export interface BrokerStore {
  createConnection(c: BrokerConnection): Promise<void>;
  findConnection(id: string): Promise<BrokerConnection | null>;
  findConnectionByState(stateHash: string): Promise<BrokerConnection | null>;
  /** An agent's connections, or every connection when agentId is omitted; oldest first. */
  listConnections(agentId?: string): Promise<BrokerConnection[]>;
  /**
   * Applies the patch, unless the connection is disconnected: that is final, so a sync or a
   * re-seal that was under way when the owner disconnected cannot bring it (or its credentials) back.
   */
  updateConnection(id: string, patch: ConnectionPatch, at: string): Promise<void>;

  findUser(agentId: string, kind: BrokerKind): Promise<BrokerUser | null>;
  /** Inserts the user, or returns the one already registered for (agent, kind). */
  saveUser(user: BrokerUser): Promise<BrokerUser>;
  listUsers(): Promise<BrokerUser[]>;
  updateUserSecret(agentId: string, kind: BrokerKind, secret: Sealed): Promise<void>;
  deleteUser(agentId: string, kind: BrokerKind): Promise<void>;

  /** Which of `keys` the agent has imported already. */
  importedKeys(agentId: string, keys: readonly string[]): Promise<Set<string>>;
  /** Inserts the rows, ignoring keys already present. */
  saveImportedFills(rows: readonly ImportedFill[]): Promise<void>;
  /** Which of `keys` the agent has imported already as activities. */
  importedActivityKeys(agentId: string, keys: readonly string[]): Promise<Set<string>>;
  /** Inserts the rows, ignoring keys already present (the index is append-only). */
  saveImportedActivities(rows: readonly ImportedActivity[]): Promise<void>;
  /** Every fill imported through the connection: what implied positions add up. */
  importedFillsOf(connectionId: string): Promise<Pick<ImportedFill, 'symbol' | 'side' | 'quantity'>[]>;
  /** The cumulative quantities recorded so far for each of the agent's broker order ids. */
  cumulativeByOrder(agentId: string, brokerOrderIds: readonly string[]): Promise<Map<string, string[]>>;
  /** Order keys already linked to each decision. */
  linkedOrderKeys(decisionIds: readonly string[]): Promise<Map<string, string[]>>;
  /** How many of the agent's imported executions (records, not fill keys) carry each link method. */
  linkCounts(agentId: string): Promise<LinkCounts>;

  /** The decision carrying this link token, whoever's it is. */
  decisionByLinkToken(token: string): Promise<DecisionForLinking | null>;
  /** The agent's decisions recorded in [fromMs, toMs]. */
  decisionsBetween(agentId: string, fromMs: number, toMs: number): Promise<DecisionForLinking[]>;

  saveSnapshot(snapshot: PositionSnapshot): Promise<void>;
  latestSnapshot(connectionId: string): Promise<PositionSnapshot | null>;

  /** One sync per connection at a time (across processes on PostgreSQL); null when taken. */
  tryLockSync(connectionId: string): Promise<SyncLock | null>;
}
