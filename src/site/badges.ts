// The site wing's badge use case: gathers the facts a badge needs (badge.ts says what it shows)
// from the agent's records, its execution links and its stored performance, and keeps each
// drawn badge for a few seconds so a popular embed costs no query per view. Reads only: the
// chain head's counts, the agent's first record, the broker fill index's link counts, and a
// performance summary given in.
// Nothing here waits on Redis or a market provider.
import type { ExecutionLinks } from '../brokers/links.ts';
import type { Agent } from '../domain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { isHandle } from '../domain/handle.ts';
import type { AgentRecords } from '../ledger/public/agent-records.ts';
import type { PerformanceReport } from '../method/perf/perf.ts';
import { headlineOf } from '../performance/views.ts';
import {
  badgeText, renderBadge, unavailableText, unknownAgentText,
  type BadgeFacts, type BadgeStyle, type BadgeText, type Caution, type PerformanceSummary,
} from './badge.ts';

/** The agent's performance as the `return` badge needs it; null while none is computed. */
export type PerformanceSummaryOf = (agent: Agent) => Promise<PerformanceSummary | null>;

/** Until the performance wing stores reports, every agent has none: the `return` badge shows a dash. */
export const noPerformanceYet: PerformanceSummaryOf = async () => null;

/** The summary of a perf_v1 report: return since inception, and the benchmark's over the same days. */
export function summaryOfReport(report: PerformanceReport): PerformanceSummary {
  return headlineOf(report);
}

export type Badge = { svg: string; text: BadgeText; known: boolean };

const DAY_MS = 86_400_000;

/** How long a drawn badge is reused, and how many are kept. */
export const BADGE_MEMO = { ms: 10_000, entries: 2_000 };

export type BadgesDeps = { records: AgentRecords; links: ExecutionLinks; clock: Clock; performance: PerformanceSummaryOf; log?: (message: string, error: unknown) => void };

export class Badges {
  private readonly memo = new Map<string, { at: number; badge: Badge }>();

  constructor(private readonly deps: BadgesDeps) {}

  async badge(handle: string, style: BadgeStyle): Promise<Badge> {
    const key = `${style}\n${handle}`;
    const now = this.deps.clock.now().getTime();
    const kept = this.memo.get(key);
    if (kept && now - kept.at < BADGE_MEMO.ms) return kept.badge;
    const badge = await this.draw(handle, style, now);
    this.remember(key, now, badge);
    return badge;
  }

  private remember(key: string, at: number, badge: Badge): void {
    this.memo.delete(key);
    while (this.memo.size >= BADGE_MEMO.entries) this.memo.delete(this.memo.keys().next().value!);
    this.memo.set(key, { at, badge });
  }

  private async draw(handle: string, style: BadgeStyle, now: number): Promise<Badge> {
    const agent = isHandle(handle) ? await this.deps.records.byHandle(handle) : null;
    if (agent === null) return drawn(unknownAgentText(style), style, false);
    const facts = await this.facts(agent, style, now);
    return drawn(facts === null ? unavailableText(style) : badgeText(facts), style, true);
  }

  /** The facts of one style; null when the performance wing failed to answer. */
  private async facts(agent: Agent, style: BadgeStyle, now: number): Promise<BadgeFacts | null> {
    const demo: Caution = agent.demo ? 'demo' : null;
    if (style === 'return') {
      const performance = await this.performance(agent);
      if (performance === undefined) return null;
      return { style, caution: performance?.synthetic ? 'synthetic' : demo, performance };
    }
    const counts = await this.deps.records.counts(agent.id);
    if (style === 'verified') {
      const links = counts.byType.execution === 0 ? { link_token: 0 } : await this.deps.links.counts(agent.id);
      return {
        style, caution: demo,
        decisions: counts.byType.decision, signed: counts.signed, executions: counts.byType.execution, linkToken: links.link_token,
      };
    }
    const first = counts.total === 0 ? undefined : await this.deps.records.first(agent.id);
    const days = first === undefined ? null : Math.max(0, Math.floor((now - Date.parse(first.recordedAt)) / DAY_MS));
    return { style, caution: demo, records: counts.total, days };
  }

  /** The summary, null when none is computed, undefined when the performance wing failed. */
  private async performance(agent: Agent): Promise<PerformanceSummary | null | undefined> {
    try {
      return await this.deps.performance(agent);
    } catch (error) {
      this.deps.log?.('badge: the performance summary failed; the return badge says unavailable', error);
      return undefined;
    }
  }
}

function drawn(text: BadgeText, style: BadgeStyle, known: boolean): Badge {
  return { svg: renderBadge(text, style), text, known };
}
