// The HTTP service: one fastify instance, schema-first routes, every error in the 2.7 body.
// Dependencies come in (store, clock, config) so tests run the real app on real databases.
import Fastify, { type FastifySchema } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { Ajv } from 'ajv';
import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Clock } from '../ledger/clock.ts';
import { systemClock } from '../ledger/clock.ts';
import { DecisionService } from '../ledger/decisions.ts';
import { decisionAsserter, type SignatureCheck } from '../ledger/signing.ts';
import { authenticator } from '../ledger/auth.ts';
import { errors } from '../ledger/errors.ts';
import { SigningKeys } from '../ledger/keys.ts';
import { Operators } from '../ledger/operators.ts';
import { requestId } from '../ledger/ids.ts';
import type { LedgerStore } from '../store/port.ts';
import type { WitnessPolicy } from '../core/witness-policy.ts';
import type { Agent } from '../domain/types.ts';
import { ApiError, clientErrorResponse, frameworkErrors, installErrorHandling, MAX_PATH_SEGMENT, sendError } from './errors.ts';
import { SharedBudget, SnapshotLocalStore, type RefundableStore } from './rate-limit-store.ts';
import { BODY_LIMIT_BYTES, installJsonBody } from './json-body.ts';
import { installStrictQueryIntegers } from './query.ts';
import { installResponseHeaders } from './response-headers.ts';
import { ErrorBody } from './schemas.ts';
import type { App } from './types.ts';
import { adminRoutes } from './routes/admin.ts';
import { assertionRoutes } from './routes/assertion.ts';
import { decisionRoutes } from './routes/decisions.ts';
import { healthRoutes } from './routes/health.ts';
import { immutableRoutes } from './routes/immutable.ts';
import { keyRoutes } from './routes/keys.ts';
import { publicRoutes } from './routes/public/index.ts';
import { PublicReads } from '../ledger/public/reads.ts';
import { AgentRecords } from '../ledger/public/agent-records.ts';
import { ExecutionLinks } from '../brokers/links.ts';
import type { BrokerConnections } from '../brokers/connections.ts';
import type { Keyring } from '../brokers/vault.ts';
import { brokerConnections, keyringLoader } from '../brokers/service.ts';
import { brokerRoutes } from './routes/brokers.ts';
import { LogReads } from '../log/reads.ts';
import { AnchorReads } from '../anchor/reads.ts';
import { performanceOf, type PerformanceService } from '../performance/service.ts';
import { Directory } from '../directory/service.ts';
import { DirectoryJob } from '../directory/job.ts';
import { DEFAULT_SYNTHETIC_SEED, selectMarketData } from '../market/select.ts';
import { NoMarketData } from '../market/none.ts';
import type { MarketData } from '../market/port.ts';
import { Badges, type PerformanceSummaryOf } from '../site/badges.ts';
import { badgeRoutes } from './routes/badges.ts';
import { llmsAndDocsRoutes } from './routes/llms-and-docs.ts';
import { observationReads } from '../market/service.ts';
import type { PricingStatus } from '../market/pricing.ts';
import type { WebhookEndpoints } from '../webhooks/endpoints.ts';
import { webhookEndpoints } from '../webhooks/service.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { Metrics, metricsRoute, type MetricsSources } from './metrics.ts';
import { Site } from '../site/site.ts';
import { siteRoutes } from './routes/site.ts';
import { ReadGate } from './read-gate.ts';
import { DEFAULT_LOOP_SHARE, readPacer } from '../runtime/loop-share.ts';

export type { App } from './types.ts';

export type AppDeps = {
  store: LedgerStore;
  config: Config;
  clock?: Clock;
  checkSignature: SignatureCheck;
  logger?: boolean | object;
  /** The vkey of this node's log key (log/key.ts), published on /transparency while the log is empty. */
  logVkey?: string;
  /** The witness policy (LEDGER_WITNESS_POLICY): checkpoints are published with their cosignatures and quorum status. */
  witnessPolicy?: WitnessPolicy | null;
  /** A record path to serve instead of the one built from store, clock and checkSignature (a measurement fixture's fake). */
  decisions?: DecisionService;
  /** Broker connections; built from config, store and clock when omitted. */
  brokers?: BrokerConnections;
  /** Portfolios and performance (src/performance/service.ts); built over the store's market sub-port when omitted. */
  performance?: PerformanceService;
  /** The configured market-data provider (one instance, so its rate limit is counted once); chosen from config.market when omitted. */
  market?: MarketData;
  /** The agent's performance as the `return` badge shows it; from `performance` when omitted, else none. */
  performanceSummary?: PerformanceSummaryOf;
  /** The pricing job's status, shown on /readyz (market/service.ts). */
  pricingStatus?: () => PricingStatus;
  /** A read replica of `store` for the public reads (config.readDatabaseUrl). */
  readReplica?: LedgerStore | null;
  /** Webhook endpoints; built from config, store and clock when omitted. */
  webhooks?: WebhookEndpoints;
  /** The vault's master keyring (brokers/service.ts keyringLoader, checked at start by the server); loaded from config on first use when omitted. */
  keyring?: () => Promise<Keyring>;
};

export type LedgerApp = {
  app: App;
  decisions: DecisionService;
  brokers: BrokerConnections;
  /** Null unless metrics are configured; served on the app's port unless they have one of their own (server.ts). */
  metrics: Metrics | null;
  /** The bound on public reads at once (read-gate.ts). */
  gate: ReadGate;
  /** Keeps the directory's board level with the stored reports (directory/job.ts); the server starts it. */
  directoryJob: DirectoryJob;
  close: () => Promise<void>;
};

/** Request bodies are never coerced or stripped; query strings and headers are coerced. */
function validatorCompiler() {
  const base = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false as const };
  const body = new Ajv({ ...base, coerceTypes: false });
  const other = new Ajv({ ...base, coerceTypes: true });
  for (const ajv of [body, other]) {
    ajv.addFormat('date-time', true); // checked exactly by the core, which knows canon_v1's rules
    ajv.addFormat('uri', true);
    ajv.addSchema(ErrorBody);
  }
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? body : other).compile(schema);
}

/** The shared rate-limit budget's Redis connection, closed with the app (the plugin never closes it). */
function rateLimitRedis(app: App, url: string): Redis {
  // Commands are never queued while Redis is away (SharedBudget counts locally instead).
  const redis = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return redis;
}

/** The provider config.market names; a bad setting (the server refuses it at start) prices nothing. */
function configuredMarket(config: Config): MarketData {
  const selected = selectMarketData(config.market);
  return selected.ok ? selected.market : new NoMarketData(`no market data: ${selected.error}`);
}

/** Seconds a client is told to wait when it reaches a node that is shutting down. */
const RETRY_AFTER_CLOSING_S = 5;

export async function buildApp(deps: AppDeps): Promise<LedgerApp> {
  const { store, config } = deps;
  const clock = deps.clock ?? systemClock;
  let closing = false;

  const { app, rateLimitsDegraded, writeBudget, redis } = await createFastify(deps);
  const metrics = config.metrics.enabled ? new Metrics() : null;
  metrics?.install(app);
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.header('retry-after', String(RETRY_AFTER_CLOSING_S)).header('connection', 'close');
    return sendError(request, reply, errors.serviceUnavailable('the service is shutting down; retry shortly'));
  });

  const decisions = deps.decisions ?? new DecisionService({
    store, clock, baseUrl: config.baseUrl, checkSignature: deps.checkSignature, ...(metrics ? { observeCommits: metrics.observeCommit } : {}),
  });
  metrics?.connect({ store, queueDepth: () => decisions.queueDepth, redis });
  if (metrics && config.metrics.port === null) metricsRoute(app, metrics);
  const operators = new Operators(store, clock);

  const authenticate = authenticator(store);
  const reads = new PublicReads(store, config.baseUrl, {
    replica: deps.readReplica ?? null,
    onReplica: (up, reason) => (up
      ? app.log.info('public reads: the read replica answers again')
      : app.log.warn({ reason }, 'public reads: the read replica is not answering; reading from the primary meanwhile')),
  });

  await app.register(healthRoutes, { ping: () => store.ping(), isClosing: () => closing, rateLimitsDegraded, pricing: deps.pricingStatus });
  await app.register(decisionRoutes, { authenticate, decisions, baseUrl: config.baseUrl, writeLimitPerMinute: config.writeLimitPerMinute, writeBudget });
  await app.register(assertionRoutes, { authenticate, assert: decisionAsserter({ store, clock }) });
  await app.register(keyRoutes, { authenticate, keys: new SigningKeys(store, clock) });
  await app.register(immutableRoutes, { recordExists: (id) => reads.recordExists(id) });
  const log = new LogReads(store.log, deps.logVkey ?? null, config.baseUrl, deps.witnessPolicy ? { policy: deps.witnessPolicy, cosignatures: store.cosignatures } : null);
  const anchors = new AnchorReads(store.anchors, store.log, config.baseUrl);
  const performance = deps.performance ?? performanceOf(store, {
    provider: deps.market ?? configuredMarket(config), seed: config.market.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED, benchmark: config.performance.benchmark, clock,
  });
  const gate = new ReadGate(config.readBounds);
  readPacer.configure({ ...DEFAULT_LOOP_SHARE, share: config.readBounds.loopSharePercent / 100 });
  metrics?.watchReadGate(gate);
  const readLimits = { readLimitPerMinute: config.readLimitPerMinute, gate };
  const directory = new Directory(store, config.baseUrl, () => clock.now().getTime());
  const directoryJob = new DirectoryJob({
    store, clock, log: (level, message) => app.log[level](message),
    refresh: async (agent) => {
      await performance.report(agent, 'model');
      await performance.report(agent, 'broker');
    },
  });
  await app.register(publicRoutes, { reads, ...readLimits, clock, log, anchors, prices: observationReads(store), performance, directory });
  const records = new AgentRecords(store);
  const links = new ExecutionLinks(store);
  const site = new Site({
    reads, log, anchors, prices: observationReads(store), records, links, clock, siteUrl: config.siteUrl, baseUrl: config.baseUrl,
    profileSections: (agent) => performance.profile(agent, (portfolio, format) => reads.urls.performanceUrl(agent.handle, portfolio, format)),
    directory,
  });
  await app.register(siteRoutes, { site, ...readLimits });
  const keyring = deps.keyring ?? keyringLoader(config.brokers, (level, message, fields) => app.log[level](fields ?? {}, message), store);
  const brokers = deps.brokers ?? brokerConnections({
    store, config: config.brokers, siteUrl: config.siteUrl, clock, log: (level, message, fields) => app.log[level](fields ?? {}, message), keyring,
  });
  await app.register(brokerRoutes, { authenticate, connections: brokers });
  const webhooks = deps.webhooks ?? webhookEndpoints({
    store, config: config.webhooks, clock, keyring,
  });
  await app.register(webhookRoutes, { authenticate, endpoints: webhooks });
  if (config.adminToken) await app.register(adminRoutes, { operators, adminToken: config.adminToken });
  const summary = deps.performanceSummary ?? ((agent: Agent) => performance.storedSummary(agent));
  const badges = new Badges({ records, links, clock, performance: summary, log: (message, error) => app.log.warn({ err: error }, message) });
  await app.register(badgeRoutes, { badges, gate });
  await app.register(llmsAndDocsRoutes, { siteUrl: config.siteUrl, baseUrl: config.baseUrl, openapi: () => app.swagger(), ...readLimits });

  await app.ready();
  return {
    app,
    decisions,
    brokers,
    metrics,
    gate,
    directoryJob,
    close: async () => {
      closing = true;
      await closeGracefully(app);
      await brokers.drain();
      await decisions.drain();
    },
  };
}

/** The fastify instance with the error body, the lossless JSON parser, OpenAPI and rate limits. */
async function createFastify(deps: AppDeps): Promise<{ app: App; rateLimitsDegraded: () => boolean; writeBudget: RefundableStore; redis: MetricsSources['redis'] }> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    genReqId: requestId,
    requestIdHeader: false,
    // Answered by our own hook below, in the 2.7 body with Retry-After.
    return503OnClosing: false,
    // Checked by an onRequest hook (installErrorHandling), so the refusal has the 2.7 body.
    http: { requireHostHeader: false },
    frameworkErrors,
    clientErrorHandler: (err, socket) => {
      if (socket.writable) socket.end(clientErrorResponse(err as { code?: string }));
      else socket.destroy();
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as App;

  app.setValidatorCompiler(validatorCompiler());
  app.addSchema(ErrorBody);
  installResponseHeaders(app);
  installErrorHandling(app);
  installJsonBody(app);
  installStrictQueryIntegers(app);
  await registerOpenApi(app, deps.config);
  const limits = await registerRateLimits(app, deps.config);
  return { app, rateLimitsDegraded: () => deps.config.redisUrl !== null && !limits.isShared(), writeBudget: limits.writeBudget, redis: limits.redis };
}

async function registerOpenApi(app: App, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Decision ledger',
        version: '1.0.0',
        description: 'A permanent, public, tamper-evident track record for automated investing agents. Hashes follow canon_v1.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: config.siteUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An agent API key (dl_live_...).' },
          admin: { type: 'http', scheme: 'bearer', description: 'The operator token, LEDGER_ADMIN_TOKEN.' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentWildcard,
  });
}

type RouteSchema = { params?: { properties?: Record<string, unknown> } } & Record<string, unknown>;

/**
 * A wildcard route (the log's tiles: /v1/log/tile/*) documents the rest of its path as one named
 * parameter, `path`: OpenAPI has no unnamed parameters.
 */
function documentWildcard({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  const route = schema as RouteSchema | undefined;
  const rest = route?.params?.properties?.['*'];
  if (!url.endsWith('*') || rest === undefined) return { schema, url };
  return {
    schema: { ...route, params: { type: 'object', properties: { path: rest }, required: ['path'] } } as FastifySchema,
    url: `${url.slice(0, -1)}{path}`,
  };
}

/** How long a starting app waits for Redis before it counts budgets locally (and says so). */
const REDIS_START_WAIT_MS = 2_000;

function redisReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * Registers the limiter (the public reads' budget); answers whether budgets are shared between
 * processes right now, and gives the writes' budget, a store of the same kind.
 */
async function registerRateLimits(app: App, config: Config): Promise<{ isShared: () => boolean; writeBudget: RefundableStore; redis: MetricsSources['redis'] }> {
  let store: new (params: object) => RefundableStore = SnapshotLocalStore;
  let isShared = () => false;
  let health: MetricsSources['redis'] = null;
  if (config.redisUrl) {
    const redis = rateLimitRedis(app, config.redisUrl);
    let lastError = '';
    redis.on('error', (err: Error) => (lastError = err.message));
    const budget = new SharedBudget(redis, 'ledger-rate-', (shared) => {
      if (shared) app.log.info('rate limits: Redis is back; budgets are shared between processes again');
      else app.log.warn({ reason: lastError || 'not connected' }, 'rate limits: Redis is unreachable; each process counts its own budget until it returns');
    });
    store = budget.storeClass();
    isShared = () => budget.isShared;
    health = { ready: () => redis.status === 'ready', shared: isShared, fallbacks: () => budget.fallbacks };
    await redisReady(redis, REDIS_START_WAIT_MS); // shared from the first request when Redis is up
  }
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    store,
    errorResponseBuilder: (_request, context) =>
      new ApiError(errors.rateLimitExceeded(`too many requests: at most ${context.max} per minute; retry in ${context.after}`)),
  });
  return { isShared, writeBudget: new store({}), redis: health };
}

/**
 * Stops accepting and waits for in-flight requests. A keep-alive connection that finishes its
 * request while closing would otherwise hold the close open for keepAliveTimeout (72 s).
 */
async function closeGracefully(app: App): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}
