// What each public page shows, gathered from the use cases the JSON reads use (the public reads,
// the log's and the anchors' reads) plus the site's one read of its own (a decision timeline
// with the executions linked to each decision). Every read is bounded: pages of records, a
// capped list of chain heads and of linked executions.
import type { AnchorReads } from '../anchor/reads.ts';
import type { Clock } from '../ledger/clock.ts';
import { errors, fail, ok, type Result } from '../ledger/errors.ts';
import { isRecordId } from '../ledger/ids.ts';
import type { PublicReads } from '../ledger/public/reads.ts';
import type { LogReads } from '../log/reads.ts';
import type { LedgerStore } from '../store/port.ts';
import { siteStoreOf } from '../store/site.ts';
import type { SiteStore } from '../store/site-port.ts';
import type { AgentProfile, HeadRow, LedgerItem, ProofBundle, TimelineItem, Transparency } from './views.ts';
import { publishedView, recordView } from './views.ts';

/** Records per page on the home page and in an agent's timeline. */
export const FEED_PAGE = 20;
export const TIMELINE_PAGE = 20;
/** Linked executions shown under one decision (the rest are counted). */
export const EXECUTIONS_PER_DECISION = 10;
/** Chain heads listed on a page (the JSON twin lists them all). */
export const HEADS_SHOWN = 500;
/** Anchors per page on /transparency. */
export const ANCHORS_PAGE = 20;

export type SiteDeps = { reads: PublicReads; log: LogReads; anchors: AnchorReads; store: LedgerStore; clock: Clock };

export class SiteReads {
  private readonly site: SiteStore;

  constructor(private readonly deps: SiteDeps) {
    this.site = siteStoreOf(deps.store);
  }

  /** `/`: the newest records of every agent (the /v1/ledger use case), counts, the log and its anchors. */
  async home(q: { cursor?: string | undefined; includeDemo: boolean }) {
    const cursor = q.cursor !== undefined && isRecordId(q.cursor) ? q.cursor : undefined;
    const [page, transparency, log, anchoring] = await Promise.all([
      this.deps.reads.ledgerPage({ limit: FEED_PAGE, cursor, includeDemo: q.includeDemo }),
      this.transparency(),
      this.deps.log.transparency(),
      this.deps.anchors.transparency(),
    ]);
    if (!page.ok) return page;
    const feed = JSON.parse(page.value.body) as { data: LedgerItem[]; has_more: boolean; next_cursor: string | null };
    return ok({ feed, counts: transparency.counts, log, anchoring, cursor: cursor ?? null, includeDemo: q.includeDemo });
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

  /** `/agents/<handle>`: the profile and a page of its decision timeline, newest first. */
  async agent(handle: string, before?: string): Promise<Result<{ profile: AgentProfile; timeline: TimelineItem[]; nextBefore: string | null }>> {
    const profile = await this.deps.reads.profile(handle);
    if (!profile.ok) return profile;
    const found = await this.deps.reads.agent(handle);
    if (!found.ok) return found;
    const page = await this.deps.store.listAgentRecords(found.value.id, 'decision', {
      limit: TIMELINE_PAGE + 1,
      before: before !== undefined && isRecordId(before) ? before : undefined,
    });
    const decisions = page.slice(0, TIMELINE_PAGE);
    const linked = await this.linked(decisions.map((d) => d.id));
    const timeline = decisions.map((d) => ({ decision: recordView(d), ...linked(d.id) }));
    const nextBefore = page.length > TIMELINE_PAGE ? decisions[decisions.length - 1]!.id : null;
    return ok({ profile: profile.value as unknown as AgentProfile, timeline, nextBefore });
  }

  /** The executions linked to each decision: a lookup by decision id. */
  private async linked(decisionIds: string[]): Promise<(id: string) => Pick<TimelineItem, 'executions' | 'executionsTotal'>> {
    const found = await this.site.linkedExecutions(decisionIds, EXECUTIONS_PER_DECISION);
    return (id) => ({
      executions: found.executions.filter((e) => e.decisionId === id).map((e) => recordView(e.record)),
      executionsTotal: found.totals.get(id) ?? 0,
    });
  }

  /** `/records/<id>`: the proof bundle (as /v1/proof serves it), the chain neighbours, and the links. */
  async record(id: string) {
    if (!isRecordId(id)) return fail(errors.notFound(`no record ${id}`, 'record_id'));
    const proof = await this.deps.reads.proof(id, async (rid) => {
      const [section, anchor] = await Promise.all([this.deps.log.proofSection(rid), this.deps.anchors.proofSection(rid)]);
      return { ...section, ...anchor };
    });
    if (!proof.ok) return proof;
    const bundle = JSON.parse(proof.value.body) as ProofBundle;
    const seq = Number(bundle.record.entry.seq);
    const around = await this.deps.reads.chainPage({ handle: bundle.agent.handle, afterSeq: Math.max(0, seq - 2), limit: seq === 1 ? 2 : 3, payloads: false });
    const neighbours = around.ok ? (JSON.parse(around.value.body) as { records: { entry: { seq: string; id: string } }[] }).records : [];
    const at = (s: number) => neighbours.find((r) => Number(r.entry.seq) === s)?.entry.id ?? null;
    const view = publishedView(bundle.record);
    const linked = view.type === 'decision' ? (await this.linked([bundle.id]))(bundle.id) : { executions: [], executionsTotal: 0 };
    return ok({ bundle, view, previous: at(seq - 1), next: at(seq + 1), ...linked });
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
