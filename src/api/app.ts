// The HTTP service: one fastify instance, schema-first routes, every error in the 2.7 body.
// Its parts come in built (src/compose.ts), so tests run the real app on real databases.
import Fastify, { LogController, type FastifySchema } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { Ajv } from 'ajv';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { DecisionService } from '../ledger/decisions.ts';
import type { AssertDecision } from '../ledger/signing.ts';
import type { Authenticate } from '../ledger/auth.ts';
import { errors } from '../domain/errors.ts';
import type { SigningKeys } from '../ledger/keys.ts';
import type { Operators } from '../ledger/operators.ts';
import { requestId } from '../ledger/ids.ts';
import type { StoreHealth } from '../domain/store-health.ts';
import type { LogRelay } from '../runtime/log-relay.ts';
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
import type { PublicReads } from '../ledger/public/reads.ts';
import type { BrokerConnections } from '../brokers/connections.ts';
import { brokerRoutes } from './routes/brokers.ts';
import type { LogReads } from '../log/reads.ts';
import type { AnchorReads } from '../anchor/reads.ts';
import type { PerformanceService } from '../performance/service.ts';
import type { Directory } from '../directory/service.ts';
import type { DirectoryJob } from '../directory/job.ts';
import type { Badges } from '../site/badges.ts';
import { badgeRoutes } from './routes/badges.ts';
import { llmsAndDocsRoutes } from './routes/llms-and-docs.ts';
import type { ObservationReads } from '../market/observations.ts';
import type { PricingStatus } from '../market/pricing.ts';
import type { WebhookEndpoints } from '../webhooks/endpoints.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { type Metrics, metricsRoute, type MetricsSources } from './metrics.ts';
import type { Site } from '../site/site.ts';
import { siteRoutes } from './routes/site.ts';
import { ReadGate } from './read-gate.ts';
import { HANDED_REQUEST_ID, type ReadHandoff } from './read-handoff.ts';
import { ReadCache } from './read-cache.ts';
import { DEFAULT_LOOP_SHARE, readPacer } from '../runtime/loop-share.ts';

export type { App } from './types.ts';

/** The parts the routes serve, built once by the composition root (src/compose.ts). */
export type AppParts = {
  /** The store as the edge sees it: its health (the readiness probe and the metrics), never its data. */
  store: StoreHealth;
  config: Config;
  clock: Clock;
  /** The parts' logger: the app attaches its own logger to it. */
  log: LogRelay;
  /** Null unless metrics are configured. */
  metrics: Metrics | null;
  decisions: DecisionService;
  authenticate: Authenticate;
  assert: AssertDecision;
  keys: SigningKeys;
  operators: Operators;
  reads: PublicReads;
  logReads: LogReads;
  anchorReads: AnchorReads;
  prices: ObservationReads;
  performance: PerformanceService;
  directory: Directory;
  /** Keeps the directory's board level with the stored reports (directory/job.ts); the server starts it. */
  directoryJob: DirectoryJob;
  site: Site;
  badges: Badges;
  brokers: BrokerConnections;
  webhooks: WebhookEndpoints;
  /** The pricing job's status, shown on /readyz (market/service.ts). */
  pricingStatus: () => PricingStatus;
  /** Where admitted public reads are answered off this thread (read-handoff.ts); none: here. */
  readHandoff?: ReadHandoff | null;
};

/**
 * `logger`: fastify's logger options (api/logging.ts); none when omitted. `readThread`: the app of
 * a read thread (src/read-thread.ts), which the serving thread hands admitted reads: it takes their
 * request ids from the serving thread, and leaves the per-minute read limit to it.
 */
export type AppOptions = { logger?: boolean | object; readThread?: boolean };

export type LedgerApp = {
  app: App;
  decisions: DecisionService;
  brokers: BrokerConnections;
  /** Null unless metrics are configured; served on the app's port unless they have one of their own (server.ts). */
  metrics: Metrics | null;
  /** The bound on public reads at once (read-gate.ts). */
  gate: ReadGate;
  /** The copies of public reads answered while reads queue (read-cache.ts). */
  cache: ReadCache;
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

/**
 * The shared rate-limit budget's Redis connection, closed with the app (the plugin never closes it).
 * Its client is loaded only here: a node without Redis (and every read thread) skips a fifth of the
 * server's module loading at start.
 */
async function rateLimitRedis(app: App, url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  // Commands are never queued while Redis is away (SharedBudget counts locally instead), and one
  // sent as it went away fails after a second rather than waiting for it to come back.
  const redis = new Redis(url, { connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return redis;
}

/** Requests that write nothing: the rest make the public reads pace themselves (runtime/loop-share.ts). */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Seconds a client is told to wait when it reaches a node that is shutting down. */
const RETRY_AFTER_CLOSING_S = 5;

export async function buildApp(parts: AppParts, options: AppOptions = {}): Promise<LedgerApp> {
  const { store, config, clock, metrics, decisions, reads, brokers } = parts;
  let closing = false;

  const { app, rateLimitsDegraded, writeBudget, redis } = await createFastify(config, options);
  const handoff = parts.readHandoff ?? null;
  parts.log.attach(app.log);
  metrics?.install(app);
  const gate = new ReadGate(config.readBounds);
  const cache = new ReadCache({ maxBytes: config.readBounds.cacheBytes, busy: () => gate.load.waiting > 0 || gate.load.running >= gate.limits.perClient });
  app.addHook('onRequest', async (request, reply) => {
    if (!READ_METHODS.has(request.method)) readPacer.writeSeen();
    if (!closing) return;
    reply.header('retry-after', String(RETRY_AFTER_CLOSING_S)).header('connection', 'close');
    return sendError(request, reply, errors.serviceUnavailable('the service is shutting down; retry shortly'));
  });
  // An agent reads what it wrote: its write's acknowledgement drops the cache's copies of its reads.
  // Only with the cache on: otherwise the write path runs no hook for it.
  if (config.readBounds.cacheBytes > 0) {
    app.addHook('onSend', async (request, reply, payload) => {
      if (!READ_METHODS.has(request.method) && reply.statusCode < 300) cache.wrote(request.holder?.agent.handle ?? null);
      return payload;
    });
  }
  metrics?.connect({ store, queueDepth: () => decisions.queueDepth, redis });
  if (metrics && config.metrics.port === null) metricsRoute(app, metrics);

  const { authenticate } = parts;
  await app.register(healthRoutes, { ping: () => store.ping(), isClosing: () => closing, rateLimitsDegraded, pricing: parts.pricingStatus });
  await app.register(decisionRoutes, { authenticate, decisions, baseUrl: config.baseUrl, writeLimitPerMinute: config.writeLimitPerMinute, writeBudget });
  await app.register(assertionRoutes, { authenticate, assert: parts.assert });
  await app.register(keyRoutes, { authenticate, keys: parts.keys });
  await app.register(immutableRoutes, { recordExists: (id) => reads.recordExists(id) });
  readPacer.configure({ ...DEFAULT_LOOP_SHARE, share: config.readBounds.loopSharePercent / 100 });
  metrics?.watchReadGate(gate);
  if (handoff) metrics?.watchReadThreads(handoff);
  metrics?.watchReadCache(cache);
  const readLimits = { readLimitPerMinute: options.readThread ? undefined : config.readLimitPerMinute, gate, handoff, onReadThread: options.readThread ?? false };
  await app.register(publicRoutes, {
    reads, ...readLimits, cache, clock, log: parts.logReads, anchors: parts.anchorReads, prices: parts.prices, performance: parts.performance, directory: parts.directory,
  });
  await app.register(siteRoutes, { site: parts.site, ...readLimits, cache });
  await app.register(brokerRoutes, { authenticate, connections: brokers });
  await app.register(webhookRoutes, { authenticate, endpoints: parts.webhooks });
  if (config.adminToken) await app.register(adminRoutes, { operators: parts.operators, adminToken: config.adminToken });
  await app.register(badgeRoutes, { badges: parts.badges, gate, handoff });
  await app.register(llmsAndDocsRoutes, { siteUrl: config.siteUrl, baseUrl: config.baseUrl, openapi: () => app.swagger(), ...readLimits });

  await app.ready();
  return {
    app,
    decisions,
    brokers,
    metrics,
    gate,
    cache,
    directoryJob: parts.directoryJob,
    close: async () => {
      closing = true;
      await closeGracefully(app);
      await brokers.drain();
      await decisions.drain();
    },
  };
}

/** A read thread's request id: the one the serving thread gave the read. */
function handedRequestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const handed = request.headers[HANDED_REQUEST_ID];
  return typeof handed === 'string' ? handed : requestId();
}

/** The fastify instance with the error body, the lossless JSON parser, OpenAPI and rate limits. */
async function createFastify(config: Config, options: AppOptions): Promise<{ app: App; rateLimitsDegraded: () => boolean; writeBudget: RefundableStore; redis: MetricsSources['redis'] }> {
  const app = Fastify({
    logger: options.logger ?? false,
    // A read thread's requests are the serving thread's, logged there.
    ...(options.readThread ? { logController: new LogController({ disableRequestLogging: true }) } : {}),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    genReqId: options.readThread ? handedRequestId : requestId,
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
  await registerOpenApi(app, config);
  const limits = await registerRateLimits(app, config);
  return { app, rateLimitsDegraded: () => config.redisUrl !== null && !limits.isShared(), writeBudget: limits.writeBudget, redis: limits.redis };
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
    const redis = await rateLimitRedis(app, config.redisUrl);
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
