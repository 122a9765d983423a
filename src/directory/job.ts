// The directory job: keeps agent_headlines (port.ts) level with the facts. Each turn
// projects again the agents that recorded since the last turn (records after a sort-key mark, read
// through the records' unique sort-key index), then sweeps the next window of agents by id for rows
// missing or behind (a new agent, a status changed, a report stored since): at 100,000 agents a
// sweep takes SWEEP_WINDOW-sized steps, never a pass over the board at once. An agent is projected
// after `refresh` has its reports brought up to date (the performance service, which stores them),
// from what is stored: the chain head's counts, the first record, the link counts of the broker fill index
// and the stored model and broker reports (rules.ts). It also prunes rows superseded more than
// CURSOR_TTL_MS ago. Never on the record path: a record is projected on a later turn.
// It decides when a row is projected and from which facts.
import type { Agent } from '../domain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { JobLoop } from '../runtime/job-loop.ts';
import type { DirectoryStore } from './port.ts';
import type { StoredReport } from '../performance/port.ts';
import type { LedgerStore } from '../store/port.ts';
import { CURSOR_TTL_MS, headlineOf, type HeadlineFacts, type ReportFacts, type StoredReportText } from './rules.ts';

export const DIRECTORY_JOB = {
  /** Agents projected per turn, at most. */
  batch: 200,
  /** Records read per turn for the agents that recorded. */
  records: 5_000,
  /** Agents checked per turn by the sweep. */
  window: 2_000,
  /**
   * Wait between turns. A turn that read as many records as it may, or found more stale agents
   * than a batch, goes again at once; one that found a few records does not: while agents record
   * all the time, the board follows them every turn, not at once after each record.
   */
  pollMs: 5_000,
  /** Wait after a failed turn. */
  retryMs: 30_000,
};

export type DirectoryJobDeps = {
  store: LedgerStore;
  clock: Clock;
  /** Brings the agent's stored reports up to date (performance service); omitted: what is stored is projected. */
  refresh?: (agent: Agent) => Promise<void>;
  log?: (level: 'warn' | 'info', message: string) => void;
  batch?: number;
  /** Records read per turn for the agents that recorded (DIRECTORY_JOB.records). */
  records?: number;
  pollMs?: number;
};

export class DirectoryJob {
  private readonly directory: DirectoryStore;
  private readonly loop: JobLoop;
  /** The sort key of the last record whose agent was projected (null until the first turn reads the newest). */
  private recordsMark: string | null = null;
  /** Where the sweep goes on from (an agent id; '' from the first). */
  private sweepAfter = '';

  constructor(private readonly deps: DirectoryJobDeps) {
    this.directory = deps.store.directory;
    this.loop = new JobLoop({
      turn: () => this.turn(),
      failed: (err) => {
        deps.log?.('warn', `directory: a turn failed (${err.message}); trying again in ${DIRECTORY_JOB.retryMs / 1000} s`);
        return DIRECTORY_JOB.retryMs;
      },
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.halt(3_000);
  }

  /** One turn: prune, the agents that recorded, then a window of the sweep; answers the wait before the next. */
  async turn(): Promise<number> {
    const batch = this.deps.batch ?? DIRECTORY_JOB.batch;
    const now = this.deps.clock.now();
    await this.directory.prune(new Date(now.getTime() - CURSOR_TTL_MS).toISOString());
    this.recordsMark ??= (await this.deps.store.newestSortKey()) ?? '';
    const recordsLimit = this.deps.records ?? DIRECTORY_JOB.records;
    const recent = await this.directory.recordedAfter(this.recordsMark, recordsLimit);
    for (const id of recent.agents) await this.projectOne(id);
    if (recent.last !== null) this.recordsMark = recent.last;
    const { stale, last } = await this.directory.staleAgents(this.sweepAfter, DIRECTORY_JOB.window);
    const due = stale.slice(0, batch);
    for (const id of due) {
      if (this.loop.stopping) return 0;
      await this.projectOne(id);
    }
    // A window with more than a batch goes on after the last projected; else the sweep moves on (and wraps).
    this.sweepAfter = stale.length > batch ? due.at(-1)! : (last ?? '');
    const busy = stale.length > batch || recent.records >= recordsLimit;
    return busy ? 0 : (this.deps.pollMs ?? DIRECTORY_JOB.pollMs);
  }

  /** Sweeps the whole board until a pass finds nothing to project (tests, benchmarks); at most `passes` passes. */
  async catchUp(passes = 5): Promise<void> {
    for (let pass = 0; pass < passes; pass++) {
      let projected = 0;
      let after = '';
      for (;;) {
        const { stale, last } = await this.directory.staleAgents(after, DIRECTORY_JOB.window);
        for (const id of stale) {
          await this.projectOne(id);
          projected++;
        }
        if (last === null) break;
        after = last;
      }
      if (projected === 0) return;
    }
  }

  /** Projects one agent; a failure is logged and the sweep comes back to it. */
  private async projectOne(agentId: string): Promise<void> {
    try {
      const agent = await this.deps.store.findAgentById(agentId);
      if (agent === null) return;
      if (this.deps.refresh) await this.deps.refresh(agent).catch(() => undefined); // a provider failure leaves the stored reports as they are
      const facts = await this.facts(agent);
      await this.directory.project(headlineOf(facts, this.deps.clock.now()));
    } catch (err) {
      this.deps.log?.('warn', `directory: agent ${agentId} not projected: ${(err as Error).message}`);
    }
  }

  private async facts(agent: Agent): Promise<HeadlineFacts> {
    const { store } = this.deps;
    // The counts are read before the reports: a report never covers records the row does not count.
    const [head, counts] = await Promise.all([store.chainHead(agent.id), store.countRecords(agent.id)]);
    const [first] = head.seq === 0 ? [] : await store.listChain(agent.id, 0, 1, 1);
    const links = counts.byType.execution === 0 ? { link_token: 0 } : await store.brokers.linkCounts(agent.id);
    const [model, broker] = await Promise.all([store.performance.report(agent.id, 'model'), store.performance.report(agent.id, 'broker')]);
    return {
      agent,
      records: head.seq,
      decisions: counts.byType.decision,
      executions: counts.byType.execution,
      signed: counts.signed,
      linkToken: links.link_token,
      firstRecordAt: first?.recordedAt ?? null,
      lastRecordAt: head.recordedAt,
      model: reportFacts(model),
      broker: reportFacts(broker),
    };
  }
}

/** A stored report as the projection reads it; the figures of one it cannot read (an older shape) are null. */
function reportFacts(row: StoredReport | null): ReportFacts | null {
  if (row === null) return null;
  let text: StoredReportText | null = null;
  try {
    const parsed = JSON.parse(row.report) as StoredReportText;
    if (parsed.published?.metrics?.cumulative_return) text = parsed;
  } catch {
    text = null;
  }
  return { computedAt: row.computedAt, asOf: row.asOf, text };
}
