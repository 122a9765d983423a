// The composition root: every part of a serving process built once, over the opened store and the
// configuration: the vault's keyring, the market-data provider, the use cases, the reads, and the
// jobs with the order they start and stop in (composeService). The HTTP app (api/app.ts) registers
// its routes over the parts; the server listens and runs the jobs; tests and benchmarks compose the
// same way, replacing the parts they fake.
import type { AppParts } from './api/app.ts';
import { Metrics } from './api/metrics.ts';
import { ConfigError, type Config } from './config.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import { DecisionService } from './ledger/decisions.ts';
import { decisionAsserter, signatureChecker, type SignatureCheck } from './ledger/signing.ts';
import { VerifierThread, warnWhenLate } from './ledger/verifier-thread.ts';
import { authenticator } from './ledger/auth.ts';
import { SigningKeys } from './ledger/keys.ts';
import { Operators } from './ledger/operators.ts';
import { PublicReads } from './ledger/public/reads.ts';
import type { LedgerStore } from './store/port.ts';
import type { WitnessPolicy } from './core/witness-policy.ts';
import type { Agent } from './domain/types.ts';
import { brokerConnections, SyncWorker } from './brokers/service.ts';
import { keyringLoader } from './vault/service.ts';
import type { Keyring } from './vault/vault.ts';
import { LogReads } from './log/reads.ts';
import type { LogKey } from './log/key.ts';
import { integratorJob, loadServiceLogKey, loadWitnessPolicy, witnessingJob } from './log/service.ts';
import { anchoringJob } from './anchor/service.ts';
import { AnchorReads } from './anchor/reads.ts';
import { performanceOf } from './performance/service.ts';
import { Directory } from './directory/service.ts';
import { DirectoryJob } from './directory/job.ts';
import { DEFAULT_SYNTHETIC_SEED, selectMarketData } from './market/select.ts';
import type { MarketData } from './market/port.ts';
import { SyntheticMarketData } from './market/synthetic.ts';
import { observationReads, pricingService, type Pricing } from './market/service.ts';
import { Badges, type PerformanceSummaryOf } from './site/badges.ts';
import { Site } from './site/site.ts';
import { delivererJob, webhookEndpoints } from './webhooks/service.ts';
import { LogRelay } from './runtime/log-relay.ts';
import { AgentRecords } from './ledger/public/agent-records.ts';
import { ExecutionLinks } from './brokers/links.ts';

export type ComposeInput = {
  store: LedgerStore;
  config: Config;
  checkSignature: SignatureCheck;
  clock?: Clock;
  /** A read replica of `store` for the public reads (config.readDatabaseUrl). */
  readReplica?: LedgerStore | null;
  /** The vkey of this node's log key (log/key.ts), published on /transparency while the log is empty. */
  logVkey?: string;
  /** The witness policy (LEDGER_WITNESS_POLICY): checkpoints are published with their cosignatures and quorum status. */
  witnessPolicy?: WitnessPolicy | null;
  /** Where the parts log (the app attaches its logger to it); a new one when omitted. */
  log?: LogRelay;
};

export type Composition = AppParts & {
  /** The configured market-data provider: one instance, so its rate limit is counted once. */
  market: MarketData;
  /** The vault's master keyring, loaded and checked against the database on first use, then kept. */
  keyring: () => Promise<Keyring>;
  /** The pricing job (market/service.ts); composeService runs it. */
  pricing: Pricing;
  /** The periodic broker sync; composeService runs it. */
  brokerSync: SyncWorker;
};

/**
 * What a test or a benchmark puts in place of a part: a measurement fixture's record path, a
 * provider, a performance service or summary, a keyring, the pricing job. `market` is also how the
 * server passes the provider it selected (and checked) at start.
 */
export type Replacements = Partial<Pick<Composition, 'decisions' | 'brokers' | 'performance' | 'market' | 'webhooks' | 'keyring' | 'pricing'>>
  & { performanceSummary?: PerformanceSummaryOf };

/** The provider config.market names; a bad setting is a ConfigError naming the variable. */
function configuredMarket(config: Config): MarketData {
  const selected = selectMarketData(config.market);
  if (!selected.ok) throw new ConfigError(selected.error);
  return selected.market;
}

export function compose(input: ComposeInput, replace: Replacements = {}): Composition {
  const { store, config } = input;
  const clock = input.clock ?? systemClock;
  const relay = input.log ?? new LogRelay();
  const log = relay.write;
  const metrics = config.metrics.enabled ? new Metrics() : null;
  const decisions = replace.decisions ?? new DecisionService({
    store, clock, baseUrl: config.baseUrl, checkSignature: input.checkSignature, ...(metrics ? { observeCommits: metrics.observeCommit } : {}),
  });
  const reads = new PublicReads(store, config.baseUrl, {
    replica: input.readReplica ?? null,
    onReplica: (up, reason) => (up
      ? log('info', 'public reads: the read replica answers again')
      : log('warn', 'public reads: the read replica is not answering; reading from the primary meanwhile', { reason })),
  });
  const logReads = new LogReads(store.log, input.logVkey ?? null, config.baseUrl,
    input.witnessPolicy ? { policy: input.witnessPolicy, cosignatures: store.cosignatures } : null);
  const anchorReads = new AnchorReads(store.anchors, store.log, config.baseUrl);
  const seed = config.market.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED;
  const market = replace.market ?? configuredMarket(config);
  const prices = observationReads(store, market);
  const performance = replace.performance ?? performanceOf(store, { provider: market, seed, benchmark: config.performance.benchmark, clock });
  const directory = new Directory(store, config.baseUrl, () => clock.now().getTime());
  const directoryJob = new DirectoryJob({
    store, clock, log,
    refresh: async (agent) => {
      await performance.report(agent, 'model');
      await performance.report(agent, 'broker');
    },
  });
  const records = new AgentRecords(store);
  const links = new ExecutionLinks(store);
  const site = new Site({
    reads, log: logReads, anchors: anchorReads, prices, records, links, clock, siteUrl: config.siteUrl, baseUrl: config.baseUrl,
    profileSections: (agent) => performance.profile(agent, (portfolio, format) => reads.urls.performanceUrl(agent.handle, portfolio, format)),
    directory,
  });
  const keyring = replace.keyring ?? keyringLoader(config.brokers, log, store.vault);
  const brokers = replace.brokers ?? brokerConnections({ store, config: config.brokers, siteUrl: config.siteUrl, clock, log, keyring });
  const webhooks = replace.webhooks ?? webhookEndpoints({ store, config: config.webhooks, clock, keyring });
  const summary = replace.performanceSummary ?? ((agent: Agent) => performance.storedSummary(agent));
  const badges = new Badges({ records, links, clock, performance: summary, log: (message, error) => log('warn', message, { err: error }) });
  const pricing = replace.pricing ?? pricingService(store, market, log, { facts: { benchmark: config.performance.benchmark } }, new SyntheticMarketData(seed));
  return {
    store, config, clock, log: relay, metrics, decisions,
    authenticate: authenticator(store), assert: decisionAsserter({ store, clock }), keys: new SigningKeys(store, clock), operators: new Operators(store, clock),
    reads, logReads, anchorReads, prices, performance, directory, directoryJob, site, badges, brokers, webhooks,
    pricingStatus: () => pricing.status(),
    market, keyring, pricing,
    brokerSync: new SyncWorker(brokers, config.brokers.syncIntervalS, log),
  };
}

/** A job of a serving process: started when the process may run it, stopped at shutdown. */
export type Job = { name: string; start: () => void | Promise<void>; stop: () => Promise<void> };

/** A serving process composed: its parts, its log key, and its jobs around the requests it takes. */
export type Service = {
  parts: Composition;
  logKey: LogKey;
  /**
   * The jobs in the order they start; they stop in the reverse order. `requests` (the HTTP app
   * taking requests) sits between two kinds: the jobs that carry committed records on (witnessing,
   * the log's integrator, anchoring, webhook delivery) run from before the first request to after
   * the last, so a record of the last request is still carried; the jobs that write records of
   * their own (directory reports, prices, broker fills) start after it and stop before it.
   */
  jobs: (requests: Job) => Job[];
  /** Closes what the service holds beyond its jobs (the signature verifier's thread); after the jobs stop. */
  close: () => Promise<void>;
};

export type ServiceInput = Pick<ComposeInput, 'store' | 'config' | 'readReplica'> & { log: LogRelay };

/**
 * Composes a serving process: the market-data provider chosen, the log key loaded (or generated
 * once), the witness policy read, the signature verifier's thread made, then the parts and the
 * jobs over them. A bad setting is a ConfigError; nothing is left running when it throws.
 */
export async function composeService(input: ServiceInput): Promise<Service> {
  const { store, config, log: relay } = input;
  const market = configuredMarket(config);
  const jobLog = { info: (m: string) => relay.write('info', m), warn: (m: string) => relay.write('warn', m), error: (m: string) => relay.write('error', m) };
  const logKey = await loadServiceLogKey(config, jobLog);
  const witnessPolicy = config.witnessPolicyFile
    ? await loadWitnessPolicy(config.witnessPolicyFile).catch((err: Error) => { throw new ConfigError(err.message); })
    : null;
  const verifier = new VerifierThread({ onLate: warnWhenLate(jobLog.warn) });
  const parts = compose({
    store, config, checkSignature: signatureChecker(store, verifier.verify), readReplica: input.readReplica, logVkey: logKey.vkey, witnessPolicy, log: relay,
  }, { market });
  const witnessing = witnessPolicy ? witnessingJob(store, witnessPolicy, jobLog) : null;
  const carriers: Job[] = [
    ...(witnessing ? [named('witnessing', witnessing)] : []),
    named('log integrator', integratorJob(store, logKey, jobLog, witnessing ? () => witnessing.wake() : undefined)),
    named('anchoring', anchoringJob(store, config.anchor, jobLog.warn)),
    named('webhook delivery', delivererJob({ store, config: config.webhooks, keyring: parts.keyring, baseUrl: config.baseUrl, log: relay.write })),
  ];
  const writers: Job[] = [
    named('directory', parts.directoryJob),
    named('pricing', parts.pricing),
    named('broker sync', parts.brokerSync),
  ];
  return { parts, logKey, jobs: (requests) => [...carriers, requests, ...writers], close: () => verifier.close() };
}

function named(name: string, job: { start: () => void; stop: () => Promise<void> }): Job {
  return { name, start: () => job.start(), stop: () => job.stop() };
}

/**
 * Starts `jobs` in order and answers how to stop them: the started ones in the reverse order, once.
 * A start that throws stops those started before it, then throws.
 */
export async function startJobs(jobs: Job[]): Promise<() => Promise<void>> {
  const started: Job[] = [];
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= (async () => {
    for (const job of started.reverse()) await job.stop();
  })());
  try {
    for (const job of jobs) {
      await job.start();
      started.push(job);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
}
