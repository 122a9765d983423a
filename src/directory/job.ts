// The directory job: keeps agent_headlines (store/directory-port.ts) level with the facts. Each turn
// asks the store for the agents whose row is missing or behind (their chain head, status or a
// stored report moved since it was projected), optionally has their reports brought up to date
// first (`refresh`: the performance service, which stores them), then projects each one from what
// is stored: the chain head's counts, the first record, the link counts of the broker fill index
// and the stored model and broker reports (rules.ts). It also prunes rows superseded more than
// CURSOR_TTL_MS ago. Never on the record path: a record is projected on a later turn.
// Owns: when a row is projected and from which facts.
import type { Agent } from '../domain/types.ts';
import type { Clock } from '../ledger/clock.ts';
import { JobLoop } from '../runtime/job-loop.ts';
import { brokerStoreOf } from '../store/brokers.ts';
import { directoryStoreOf } from '../store/directory.ts';
import type { DirectoryStore } from '../store/directory-port.ts';
import { marketStoreOf } from '../store/market.ts';
import type { StoredReport } from '../store/market-port.ts';
import type { LedgerStore } from '../store/port.ts';
import { CURSOR_TTL_MS, headlineOf, type HeadlineFacts, type ReportFacts, type StoredReportText } from './rules.ts';

export const DIRECTORY_JOB = {
  /** Agents projected per turn. */
  batch: 200,
  /** Wait between turns when every row is level; a turn that filled its batch goes again at once. */
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
  pollMs?: number;
};

export class DirectoryJob {
  private readonly directory: DirectoryStore;
  private readonly loop: JobLoop;

  constructor(private readonly deps: DirectoryJobDeps) {
    this.directory = directoryStoreOf(deps.store);
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

  /** One turn: prune, then project up to a batch of stale agents; answers the wait before the next. */
  async turn(): Promise<number> {
    const batch = this.deps.batch ?? DIRECTORY_JOB.batch;
    const now = this.deps.clock.now();
    await this.directory.prune(new Date(now.getTime() - CURSOR_TTL_MS).toISOString());
    const stale = await this.directory.staleAgents(batch);
    for (const id of stale) {
      if (this.loop.stopping) break;
      await this.projectOne(id).catch((err: Error) => this.deps.log?.('warn', `directory: agent ${id} not projected: ${err.message}`));
    }
    return stale.length >= batch ? 0 : (this.deps.pollMs ?? DIRECTORY_JOB.pollMs);
  }

  /** Projects every stale agent (tests, `ledger demo`): turns until none is left. */
  async catchUp(): Promise<void> {
    const batch = this.deps.batch ?? DIRECTORY_JOB.batch;
    for (;;) {
      const before = await this.directory.staleAgents(batch);
      if (before.length === 0) return;
      await this.turn();
      const after = await this.directory.staleAgents(batch);
      if (after.length > 0 && after.join() === before.join()) return; // these fail to project: the log says why
    }
  }

  private async projectOne(agentId: string): Promise<void> {
    const { store } = this.deps;
    const agent = await store.findAgentById(agentId);
    if (agent === null) return;
    if (this.deps.refresh) await this.deps.refresh(agent).catch(() => undefined); // a provider failure leaves the stored reports as they are
    const facts = await this.facts(agent);
    await this.directory.project(headlineOf(facts, this.deps.clock.now()));
  }

  private async facts(agent: Agent): Promise<HeadlineFacts> {
    const { store } = this.deps;
    const market = marketStoreOf(store);
    // The counts are read before the reports: a report never covers records the row does not count.
    const [head, counts] = await Promise.all([store.chainHead(agent.id), store.countRecords(agent.id)]);
    const [first] = head.seq === 0 ? [] : await store.listChain(agent.id, 0, 1, 1);
    const links = counts.byType.execution === 0 ? { link_token: 0 } : await brokerStoreOf(store).linkCounts(agent.id);
    const [model, broker] = await Promise.all([market.report(agent.id, 'model'), market.report(agent.id, 'broker')]);
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
