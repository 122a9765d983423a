// The directory use case: GET /v1/agents (JSON or CSV) and the /agents page read the board here.
// A listing reads the projected rows (port.ts), never a report: every figure is as
// of the stored report it came from, and the answer says when the board was last projected.
// Paging is keyset-based on (sort key, agent id), pinned to the board version of the first page
// (the cursor carries it), so records, new agents and re-projections meanwhile never skip or
// repeat an agent. The cursor also carries the position and the last rank, so ranks (competition
// ranking: equal values share a rank) continue across pages without counting.
// It owns the listing's query, cursor, ranks, counts and its JSON and CSV documents.
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { csvBoolean, csvDocument, csvNumber, csvText } from '../performance/csv.ts';
import {
  BOARD_SORTS, UNRANKED_KEY, type BoardCounts, type BoardFilter, type BoardSort, type BoardState, type DirectoryStore, type Headline,
} from './port.ts';
import type { LedgerStore } from '../store/port.ts';

export { BOARD_SORTS, type BoardSort };
import { MIN_RETURNS_RISK } from '../method/perf/metrics.ts';
import { CURSOR_TTL_MS, MIN_RANK_DAYS, RANKED_SORTS, shareOf, unrankedReason, verificationOf, type Figures, type Verification } from './rules.ts';

export const DEFAULT_SORT: BoardSort = 'excess_return';
export const LIST_LIMIT = { default: 50, max: 200 };
/**
 * How long the counts of one filter are reused: they cost a pass over the board's counts index, so
 * they are counted at most this often per filter (on the board of the moment), not per request.
 */
const COUNTS_TTL_MS = 10_000;
const COUNTS_KEPT = 200;
/**
 * Pages kept built, by board version and query: a page of a version never changes, so the popular
 * ones (the first page of each sort) cost one read of the board's version until it is projected again.
 */
const PAGES_KEPT = 256;

export type ListQuery = BoardFilter & { sort: BoardSort; limit: number; cursor?: string | undefined };

/** One agent as the listing shows it (JSON; the CSV has the same columns but `curve`). */
export type DirectoryRow = {
  rank: number | null;
  unranked_reason: string | null;
  handle: string;
  display_name: string | null;
  status: Headline['status'];
  demo: boolean;
  synthetic: boolean;
  verification: Verification;
  records: number;
  first_record_at: string | null;
  last_record_at: string | null;
  history_days: number | null;
  signed_share: string | null;
  linked_share: string | null;
  model_return: string | null;
  broker_return: string | null;
  excess_return: string | null;
  benchmark: string | null;
  sharpe: string | null;
  max_drawdown: string | null;
  figures_as_of: string | null;
  curve: number[];
  profile_url: string;
};

export type DirectoryPage = {
  object: 'list';
  url: '/v1/agents';
  sort: BoardSort;
  /** When the board was last projected, and its version this listing reads. */
  as_of: string | null;
  board_version: number;
  rules: { min_history_days: number; sharpe_min_daily_returns: number; ties: string; unranked: string; excluded_by_default: string };
  counts: { agents: number; listed: number; unranked: number; excluded: { demo: number; synthetic: number } };
  data: DirectoryRow[];
  has_more: boolean;
  next_cursor: string | null;
  next: string | null;
};

type Cursor = { version: number; sort: BoardSort; key: number; agentId: string; position: number; rank: number | null };

export const RANKING_RULES: DirectoryPage['rules'] = {
  min_history_days: MIN_RANK_DAYS,
  sharpe_min_daily_returns: MIN_RETURNS_RISK,
  ties: 'equal values share a rank; tied agents are listed oldest registration first',
  unranked: 'agents without the figure, below the minimum history, demo or priced synthetically have no rank and are listed after the ranked ones',
  excluded_by_default: 'demo agents and agents whose figures come from synthetic prices, unless include_demo=true; retired agents are always listed',
};

export class Directory {
  private readonly board: DirectoryStore;
  private readonly countsMemo = new Map<string, { at: number; value: Promise<BoardCounts> }>();
  private readonly built = new Map<string, DirectoryPage>();

  /** `baseUrl`: the API's published address (with /v1), as the other documents name their links. */
  constructor(store: LedgerStore, private readonly baseUrl: string, private readonly now: () => number = Date.now) {
    this.board = store.directory;
  }

  async list(q: ListQuery): Promise<Result<DirectoryPage>> {
    const state = await this.board.board();
    let cursor: Cursor | null = null;
    if (q.cursor !== undefined) {
      cursor = parseCursor(q.cursor);
      if (cursor === null || cursor.sort !== q.sort || cursor.version > state.version) {
        return fail(errors.invalidRequest('cursor is not one this service gave for this sort: pass next_cursor of the previous page with the same sort', 'cursor'));
      }
      if (cursor.version < state.prunedThrough) {
        return fail(errors.invalidRequest(`cursor expired: the board it pages was replaced more than ${CURSOR_TTL_MS / 60_000} minutes ago; start again from the first page`, 'cursor'));
      }
    }
    const version = cursor?.version ?? state.version;
    const key = JSON.stringify([version, q.sort, q.limit, q.cursor ?? null, q.includeDemo, q.status ?? null, q.minHistoryDays ?? null, q.verified ?? null, q.signed ?? null]);
    const kept = this.built.get(key);
    if (kept !== undefined && kept.as_of === state.projectedAt) return ok(kept);
    const page = await this.build(q, state, cursor, version);
    this.built.delete(key);
    while (this.built.size >= PAGES_KEPT) this.built.delete(this.built.keys().next().value!);
    this.built.set(key, page);
    return ok(page);
  }

  private async build(q: ListQuery, state: BoardState, cursor: Cursor | null, version: number): Promise<DirectoryPage> {
    const [rows, counts] = await Promise.all([
      this.board.page({ ...q, version, after: cursor && { key: cursor.key, agentId: cursor.agentId }, limit: q.limit + 1 }),
      this.counts(q, state.version),
    ]);
    const shown = rows.slice(0, q.limit);
    const data = this.rows(shown, q.sort, cursor);
    const last = shown.at(-1);
    const hasMore = rows.length > q.limit && last !== undefined;
    const nextCursor = hasMore ? cursorText({
      version, sort: q.sort, key: last.keys[q.sort], agentId: last.agentId, position: (cursor?.position ?? 0) + shown.length, rank: data.at(-1)?.rank ?? null,
    }) : null;
    return {
      object: 'list',
      url: '/v1/agents',
      sort: q.sort,
      as_of: state.projectedAt,
      board_version: version,
      rules: RANKING_RULES,
      counts: { agents: counts.all, listed: counts.listed, unranked: RANKED_SORTS.has(q.sort) ? counts.unranked : 0, excluded: { demo: counts.demo, synthetic: counts.synthetic } },
      data,
      has_more: hasMore,
      next_cursor: nextCursor,
      next: nextCursor === null ? null : `${this.baseUrl}/agents?${listParams(q, nextCursor).toString()}`,
    };
  }

  /** The rows with their ranks: on a ranked sort, 1 + the ranked rows listed before with a better value. */
  private rows(shown: Headline[], sort: BoardSort, cursor: Cursor | null): DirectoryRow[] {
    let position = cursor?.position ?? 0;
    let rank = cursor?.rank ?? null;
    let previousKey = cursor?.key ?? null;
    return shown.map((h) => {
      position += 1;
      const key = h.keys[sort];
      if (RANKED_SORTS.has(sort) && key < UNRANKED_KEY) rank = previousKey === key && rank !== null ? rank : position;
      else rank = null;
      previousKey = key;
      return this.row(h, rank, sort);
    });
  }

  private row(h: Headline, rank: number | null, sort: BoardSort): DirectoryRow {
    const f = JSON.parse(h.figures) as Figures;
    const figure = sort === 'sharpe' ? 'sharpe' : 'excess_return';
    return {
      rank,
      unranked_reason: RANKED_SORTS.has(sort) && rank === null ? unrankedReason(h, f[figure], figure) : null,
      handle: h.handle,
      display_name: h.displayName,
      status: h.status,
      demo: h.demo,
      synthetic: h.synthetic,
      verification: verificationOf(h),
      records: h.records,
      first_record_at: h.firstRecordAt,
      last_record_at: h.lastRecordAt,
      history_days: h.historyDays,
      signed_share: shareOf(h.signed, h.decisions),
      linked_share: shareOf(h.linked, h.executions),
      model_return: f.model_return,
      broker_return: f.broker_return,
      excess_return: f.excess_return,
      benchmark: f.benchmark,
      sharpe: f.sharpe,
      max_drawdown: f.max_drawdown,
      figures_as_of: f.as_of,
      curve: f.curve,
      profile_url: `${this.baseUrl}/agents/${encodeURIComponent(h.handle)}`,
    };
  }

  private counts(q: ListQuery, version: number): Promise<BoardCounts> {
    const key = JSON.stringify([q.includeDemo, q.status ?? null, q.minHistoryDays ?? null, q.verified ?? null, q.signed ?? null, q.sort]);
    const now = this.now();
    const kept = this.countsMemo.get(key);
    if (kept && now - kept.at < COUNTS_TTL_MS) return kept.value;
    const value = this.board.counts(q, q.sort, version);
    value.catch(() => this.countsMemo.delete(key));
    this.countsMemo.delete(key);
    while (this.countsMemo.size >= COUNTS_KEPT) this.countsMemo.delete(this.countsMemo.keys().next().value!);
    this.countsMemo.set(key, { at: now, value });
    return value;
  }
}

/** The query string of a listing (its filters and sort, and a cursor). */
export function listParams(q: ListQuery, cursor?: string | null, extra: Record<string, string> = {}): URLSearchParams {
  const params = new URLSearchParams();
  params.set('sort', q.sort);
  params.set('limit', String(q.limit));
  if (q.status !== undefined) params.set('status', q.status);
  if (q.minHistoryDays !== undefined) params.set('min_history_days', String(q.minHistoryDays));
  if (q.verified !== undefined) params.set('verified', String(q.verified));
  if (q.signed !== undefined) params.set('signed', String(q.signed));
  if (q.includeDemo) params.set('include_demo', 'true');
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  if (cursor) params.set('cursor', cursor);
  return params;
}

function cursorText(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.version, c.sort, c.key, c.agentId, c.position, c.rank]), 'utf8').toString('base64url');
}

function parseCursor(text: string): Cursor | null {
  if (text.length > 300 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 6) return null;
  const [version, sort, key, agentId, position, rank] = v as unknown[];
  // Version 0 is the board before its first projection: empty, so no page of it had a next one.
  if (!Number.isSafeInteger(version) || (version as number) < 1) return null;
  if (typeof sort !== 'string' || !(BOARD_SORTS as readonly string[]).includes(sort)) return null;
  if (typeof key !== 'number' || !Number.isFinite(key)) return null;
  if (typeof agentId !== 'string' || !/^agt_[0-9A-Za-z]{1,40}$/.test(agentId)) return null;
  if (!Number.isSafeInteger(position) || (position as number) < 1) return null;
  if (rank !== null && (!Number.isSafeInteger(rank) || (rank as number) < 1)) return null;
  return { version: version as number, sort: sort as BoardSort, key, agentId, position: position as number, rank: rank as number | null };
}

export const CSV_COLUMNS = [
  'rank', 'unranked_reason', 'handle', 'display_name', 'status', 'demo', 'synthetic', 'verification', 'records', 'first_record_at', 'last_record_at',
  'history_days', 'signed_share', 'linked_share', 'model_return', 'broker_return', 'excess_return', 'benchmark', 'sharpe', 'max_drawdown',
  'figures_as_of', 'profile_url',
] as const;

/** The page's rows as CSV (performance/csv.ts: formula cells neutralised): every JSON field but `curve`. */
export function directoryCsv(page: DirectoryPage): string {
  return csvDocument(CSV_COLUMNS, page.data.map((r) => [
    csvNumber(r.rank), csvText(r.unranked_reason), csvText(r.handle), csvText(r.display_name), csvText(r.status), csvBoolean(r.demo), csvBoolean(r.synthetic),
    csvText(r.verification), csvNumber(r.records), csvText(r.first_record_at), csvText(r.last_record_at), csvNumber(r.history_days),
    csvNumber(r.signed_share), csvNumber(r.linked_share), csvNumber(r.model_return), csvNumber(r.broker_return), csvNumber(r.excess_return),
    csvText(r.benchmark), csvNumber(r.sharpe), csvNumber(r.max_drawdown), csvText(r.figures_as_of), csvText(r.profile_url),
  ]));
}
