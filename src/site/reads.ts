// What each public page shows, gathered from the use cases the JSON reads use (the public reads,
// the log's and the anchors' reads: the values they return, which the JSON reads write as text)
// plus the decision timeline: a page of the agent's decisions (ledger/public/agent-records.ts)
// with the executions the broker import linked to each (brokers/links.ts). Every read is bounded:
// pages of records, a capped list of chain heads and of linked executions.
import type { AnchorReads } from '../anchor/reads.ts';
import type { ExecutionLinks } from '../brokers/links.ts';
import type { Clock } from '../domain/clock.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { isRecordId } from '../ledger/ids.ts';
import type { AgentRecords } from '../ledger/public/agent-records.ts';
import type { PublicReads } from '../ledger/public/reads.ts';
import type { LogReads } from '../log/reads.ts';
import type { ObservationReads } from '../market/observations.ts';
import type { Directory, ListQuery } from '../directory/service.ts';
import type { StoredRecord } from '../domain/types.ts';
import type { AgentProfile, HeadRow, ProofBundle, TimelineItem, Transparency } from './views.ts';
import { recordView } from './views.ts';

/** Records per page on the home page and in an agent's timeline. */
export const FEED_PAGE = 20;
export const TIMELINE_PAGE = 20;
/** Linked executions shown under one decision (the rest are counted). */
export const EXECUTIONS_PER_DECISION = 10;
/** Chain heads listed on a page (the JSON twin lists them all). */
export const HEADS_SHOWN = 500;
/** Anchors per page on /transparency. */
export const ANCHORS_PAGE = 20;

/** How old the home page's counts, log and anchor summary may be. */
export const SUMMARY_TTL_MS = 2_000;

type Summary = {
  counts: Transparency['counts'];
  log: Awaited<ReturnType<LogReads['transparency']>>;
  anchoring: Awaited<ReturnType<AnchorReads['transparency']>>;
};

/** `profileSections`: the profile's portfolio and performance sections, as the JSON profile has them (src/performance). */
export type SiteDeps = {
  reads: PublicReads; log: LogReads; anchors: AnchorReads; prices: ObservationReads; records: AgentRecords; links: ExecutionLinks; clock: Clock;
  profileSections?: Parameters<PublicReads['profile']>[1];
  directory: Directory;
};

/** Agents per page of the leaderboard (the JSON twin allows up to 200). */
export const BOARD_PAGE = 50;

export class SiteReads {
  constructor(private readonly deps: SiteDeps) {}

  /** `/`: the newest records of every agent (the /v1/ledger use case), counts, the log and its anchors. */
  async home(q: { cursor?: string | undefined; includeDemo: boolean }) {
    const cursor = q.cursor !== undefined && isRecordId(q.cursor) ? q.cursor : undefined;
    const [page, summary] = await Promise.all([
      this.deps.reads.ledgerPage({ limit: FEED_PAGE, cursor, includeDemo: q.includeDemo }),
      this.summary(),
    ]);
    if (!page.ok) return page;
    const { items, hasMore, nextCursor } = page.value;
    const feed = { records: items.map((i) => i.record), hasMore, nextCursor };
    return ok({ feed, ...summary, cursor: cursor ?? null, includeDemo: q.includeDemo });
  }

  private summaryCache: { at: number; value: Promise<Summary> } | null = null;

  /**
   * The home page's counts, log and anchoring: the same for every visitor, and eight store reads,
   * so they are read at most once per SUMMARY_TTL_MS (a failed read is not kept).
   */
  private summary(): Promise<Summary> {
    const now = Date.now();
    if (this.summaryCache && now - this.summaryCache.at < SUMMARY_TTL_MS) return this.summaryCache.value;
    const value = Promise.all([this.transparency(), this.deps.log.transparency(), this.deps.anchors.transparency()])
      .then(([transparency, log, anchoring]) => ({ counts: transparency.counts, log, anchoring }));
    this.summaryCache = { at: now, value };
    value.catch(() => {
      if (this.summaryCache?.value === value) this.summaryCache = null;
    });
    return value;
  }

  private async transparency(): Promise<Transparency> {
    return (await this.deps.reads.transparency(this.deps.clock.now())) as Transparency;
  }

  /** `/agents`: every agent whose handle contains `q` (all when empty), at most HEADS_SHOWN. */
  async agents(q: string) {
    const { heads } = await this.transparency();
    const needle = q.trim().toLowerCase();
    const matching = needle === '' ? heads : heads.filter((h) => h.agent.includes(needle));
    return { q: needle, total: matching.length, heads: matching.slice(0, HEADS_SHOWN) as HeadRow[] };
  }

  /** `/agents` without a search: a page of the leaderboard (the GET /v1/agents use case). */
  board(q: Omit<ListQuery, 'limit'>) {
    return this.deps.directory.list({ ...q, limit: BOARD_PAGE });
  }

  /** `/agents/<handle>`: the profile and a page of its decision timeline, newest first. */
  async agent(handle: string, before?: string): Promise<Result<{ profile: AgentProfile; timeline: TimelineItem[]; nextBefore: string | null }>> {
    // The profile and the timeline are read side by side: each is a few store reads.
    const [profile, page] = await Promise.all([this.deps.reads.profile(handle, this.deps.profileSections), this.decisionsOf(handle, before)]);
    if (!profile.ok) return profile;
    if (!page.ok) return page;
    const decisions = page.value.slice(0, TIMELINE_PAGE);
    const counts = (profile.value as unknown as AgentProfile).counts;
    const linked = counts.execution > 0 ? await this.linked(decisions.map((d) => d.id)) : () => ({ executions: [], executionsTotal: 0 });
    const timeline = decisions.map((d) => ({ decision: recordView(d), ...linked(d.id) }));
    const nextBefore = page.value.length > TIMELINE_PAGE ? decisions[decisions.length - 1]!.id : null;
    return ok({ profile: profile.value as unknown as AgentProfile, timeline, nextBefore });
  }

  /** A page of the agent's decisions, newest first, before `before` (one more than shown: is there a next page?). */
  private async decisionsOf(handle: string, before: string | undefined): Promise<Result<StoredRecord[]>> {
    const agent = await this.deps.records.byHandle(handle);
    if (!agent) return fail(errors.notFound(`no agent with handle ${handle}`, 'handle'));
    return ok(await this.deps.records.decisions(agent.id, {
      limit: TIMELINE_PAGE + 1,
      before: before !== undefined && isRecordId(before) ? before : undefined,
    }));
  }

  /** The executions linked to each decision: a lookup by decision id. */
  private async linked(decisionIds: string[]): Promise<(id: string) => Pick<TimelineItem, 'executions' | 'executionsTotal'>> {
    const found = await this.deps.links.ofDecisions(decisionIds, EXECUTIONS_PER_DECISION);
    return (id) => ({
      executions: found.executions.filter((e) => e.decisionId === id).map((e) => recordView(e.record)),
      executionsTotal: found.totals.get(id) ?? 0,
    });
  }

  /** `/records/<id>`: the proof bundle (as /v1/proof serves it), the chain neighbours, and the links. */
  async record(id: string) {
    if (!isRecordId(id)) return fail(errors.notFound(`no record ${id}`, 'record_id'));
    const proof = await this.deps.reads.proof(id, async (record) => {
      // The sections /v1/proof adds, as it adds them.
      const [section, anchor, price] = await Promise.all([this.deps.log.proofSection(record.id), this.deps.anchors.proofSection(record.id), this.deps.prices.proofSection(record)]);
      return { ...section, ...anchor, ...price.section };
    });
    if (!proof.ok) return proof;
    const { record } = proof.value;
    const bundle = proof.value.document as unknown as ProofBundle;
    const seq = record.chainSeq;
    const view = recordView(record);
    const [around, lookup] = await Promise.all([
      this.deps.reads.chainPage({ handle: record.agentHandle, afterSeq: Math.max(0, seq - 2), limit: seq === 1 ? 2 : 3, payloads: false }),
      view.type === 'decision' ? this.linked([record.id]) : null,
    ]);
    const neighbours = around.ok ? around.value.records : [];
    const at = (s: number) => neighbours.find((r) => r.chainSeq === s)?.id ?? null;
    const linked = lookup ? lookup(record.id) : { executions: [], executionsTotal: 0 };
    return ok({ bundle, record, view, previous: at(seq - 1), next: at(seq + 1), ...linked });
  }

  /** `/transparency`: heads to pin, counts, the log, its anchors (paged) and the guarantees. */
  async transparencyPage(anchorsCursor?: number) {
    const [transparency, log, anchoring, anchors] = await Promise.all([
      this.transparency(),
      this.deps.log.transparency(),
      this.deps.anchors.transparency(),
      this.deps.anchors.list(ANCHORS_PAGE, anchorsCursor),
    ]);
    return { transparency, log, anchoring, anchors, headsShown: Math.min(HEADS_SHOWN, transparency.heads.length) };
  }
}
