// The composition root: every part of a serving process built once, over the opened store and the
// configuration: the vault's keyring, the market-data provider, the use cases, the reads and the
// jobs. The server starts the jobs; the HTTP app (api/app.ts) registers its routes over the parts;
// tests and benchmarks compose the same way, replacing the parts they fake.
import type { AppParts } from './api/app.ts';
import { Metrics } from './api/metrics.ts';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import { DecisionService } from './ledger/decisions.ts';
import { decisionAsserter, type SignatureCheck } from './ledger/signing.ts';
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
import { AnchorReads } from './anchor/reads.ts';
import { performanceOf } from './performance/service.ts';
import { Directory } from './directory/service.ts';
import { DirectoryJob } from './directory/job.ts';
import { DEFAULT_SYNTHETIC_SEED, selectMarketData } from './market/select.ts';
import { NoMarketData } from './market/none.ts';
import type { MarketData } from './market/port.ts';
import { SyntheticMarketData } from './market/synthetic.ts';
import { observationReads, pricingService, type Pricing } from './market/service.ts';
import { Badges, type PerformanceSummaryOf } from './site/badges.ts';
import { Site } from './site/site.ts';
import { webhookEndpoints } from './webhooks/service.ts';
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
  /** The pricing job (market/service.ts); the server starts it. */
  pricing: Pricing;
  /** The periodic broker sync; the server starts it. */
  brokerSync: SyncWorker;
};

/**
 * What a test or a benchmark puts in place of a part: a measurement fixture's record path, a
 * provider, a performance service or summary, a keyring, the pricing job. `market` is also how the
 * server passes the provider it selected (and checked) at start.
 */
export type Replacements = Partial<Pick<Composition, 'decisions' | 'brokers' | 'performance' | 'market' | 'webhooks' | 'keyring' | 'pricing'>>
  & { performanceSummary?: PerformanceSummaryOf };

/** The provider config.market names; a bad setting (the server refuses it at start) prices nothing. */
function configuredMarket(config: Config): MarketData {
  const selected = selectMarketData(config.market);
  return selected.ok ? selected.market : new NoMarketData(`no market data: ${selected.error}`);
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
  const prices = observationReads(store);
  const seed = config.market.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED;
  const market = replace.market ?? configuredMarket(config);
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
