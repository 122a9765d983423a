// The directory wing's storage port: agent_headlines, the projection of every agent's headline
// figures the directory job writes (job.ts) and GET /v1/agents and /agents read, with a SQLite and
// a PostgreSQL adapter (store/{sqlite,postgres}/directory.ts) over the same database; their shared
// SQL is store/directory-rows.ts.
//
// Versions: the board has a version, one more per projection. Projecting an agent marks its current
// row superseded at the new version and inserts the new row at it, in one transaction that holds the
// board row (so versions commit in order). The board as it was at version V is every row with
// version <= V not superseded by V: a listing pins V on its first page and pages on it, so an agent
// projected again meanwhile is neither skipped nor repeated. Superseded rows are pruned after a
// while (`prune`); a cursor pinned before the pruned version is refused (expired).
import type { AgentStatus } from '../domain/types.ts';

export const BOARD_SORTS = ['excess_return', 'sharpe', 'records', 'newest', 'last_active'] as const;
export type BoardSort = (typeof BOARD_SORTS)[number];

/** A sort key when the agent has no value to rank by: after every real key (keys are ascending). */
export const UNRANKED_KEY = 1e300;

/** One agent's projected row. `figures` is JSON text the directory wing writes and reads (rules.ts). */
export type Headline = {
  agentId: string;
  handle: string;
  displayName: string | null;
  status: AgentStatus;
  demo: boolean;
  synthetic: boolean;
  createdAt: string;
  records: number;
  decisions: number;
  executions: number;
  signed: number;
  /** Executions linked to a decision by link token. */
  linked: number;
  firstRecordAt: string | null;
  lastRecordAt: string | null;
  historyDays: number | null;
  figures: string;
  modelComputedAt: string | null;
  brokerComputedAt: string | null;
  /** Ascending sort keys, ties by agent id; UNRANKED_KEY when unranked. */
  keys: Record<BoardSort, number>;
  projectedAt: string;
};

export type BoardFilter = {
  status?: AgentStatus | undefined;
  minHistoryDays?: number | undefined;
  /** true: broker-verified only; false: the others only. */
  verified?: boolean | undefined;
  /** true: signed only; false: the others only. */
  signed?: boolean | undefined;
  /** Demo agents and agents priced synthetically are left out unless true. */
  includeDemo: boolean;
};

export type BoardPageQuery = BoardFilter & {
  sort: BoardSort;
  /** The board version the listing reads. */
  version: number;
  /** The last row of the previous page: the page starts after it. */
  after: { key: number; agentId: string } | null;
  limit: number;
};

export type BoardState = { version: number; projectedAt: string | null; prunedThrough: number };

export type BoardCounts = {
  /** Every agent on the board. */
  all: number;
  /** Those the filter keeps. */
  listed: number;
  /** Of those kept, how many have no rank on `sort` (no value, or below the minimum history). */
  unranked: number;
  /** Left out because they are demo agents, or (not demo) priced synthetically; 0 with includeDemo. */
  demo: number;
  synthetic: number;
};

/** The share of decisions signed, and of executions linked by link token, that make an agent signed or broker-verified. */
export const LEVEL_SHARE_PERCENT = 90;

/** What `recordedAfter` read: the agents that recorded, how many records, the last sort key read (null: none). */
export type RecordedAfter = { agents: string[]; records: number; last: string | null };

export interface DirectoryStore {
  board(): Promise<BoardState>;
  page(q: BoardPageQuery): Promise<Headline[]>;
  counts(filter: BoardFilter, sort: BoardSort, version: number): Promise<BoardCounts>;
  /**
   * Of the `window` agents after `afterId` (by id), those with no current row, or whose chain head,
   * status or stored reports moved since it was projected; `last` is the window's last id (null
   * past the last agent). A sweep of the board a window at a time.
   */
  staleAgents(afterId: string, window: number): Promise<{ stale: string[]; last: string | null }>;
  /** The agents of the records after `sortKey` (at most `limit` records, oldest first). */
  recordedAfter(sortKey: string, limit: number): Promise<RecordedAfter>;
  /** Replaces the agent's current row; answers the board version it was written at. */
  project(h: Headline): Promise<number>;
  /** Deletes the rows superseded before `before` (an ISO instant); answers the board's pruned_through. */
  prune(before: string): Promise<number>;
}
