// The HTTP service: one fastify instance, schema-first routes, every error in the 2.7 body.
// Dependencies come in (store, clock, config) so tests run the real app on real databases.
import Fastify from 'fastify';
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
import { ApiError, installErrorHandling } from './errors.ts';
import { SnapshotLocalStore } from './rate-limit-store.ts';
import { BODY_LIMIT_BYTES, installJsonBody } from './json-body.ts';
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
import { LogReads } from '../log/reads.ts';

export type { App } from './types.ts';

export type AppDeps = {
  store: LedgerStore;
  config: Config;
  clock?: Clock;
  checkSignature: SignatureCheck;
  logger?: boolean | object;
  /** The vkey of this node's log key (log/key.ts), published on /transparency while the log is empty. */
  logVkey?: string;
  /** A record path to serve instead of the one built from store, clock and checkSignature (a measurement fixture's fake). */
  decisions?: DecisionService;
};

export type LedgerApp = { app: App; decisions: DecisionService; close: () => Promise<void> };

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
  const redis = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false });
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return redis;
}

export async function buildApp(deps: AppDeps): Promise<LedgerApp> {
  const { store, config } = deps;
  const clock = deps.clock ?? systemClock;
  let closing = false;

  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestId,
    requestIdHeader: false,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>() as App;

  app.setValidatorCompiler(validatorCompiler());
  app.addSchema(ErrorBody);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
  });
  installErrorHandling(app);
  installJsonBody(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Decision ledger',
        version: '1.0.0',
        description: 'A permanent, public, tamper-evident track record for automated investing agents. Hashes follow canon_v1.',
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
  });

  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    ...(config.redisUrl ? { redis: rateLimitRedis(app, config.redisUrl), nameSpace: 'ledger-rate-' } : { store: SnapshotLocalStore }),
    errorResponseBuilder: (_request, context) =>
      new ApiError(errors.rateLimitExceeded(`too many requests: at most ${context.max} per minute; retry in ${context.after}`)),
  });

  const decisions = deps.decisions ?? new DecisionService({ store, clock, baseUrl: config.baseUrl, checkSignature: deps.checkSignature });
  const operators = new Operators(store, clock);

  const authenticate = authenticator(store);
  const reads = new PublicReads(store, config.baseUrl);

  await app.register(healthRoutes, { ping: () => store.ping(), isClosing: () => closing });
  await app.register(decisionRoutes, { authenticate, decisions, baseUrl: config.baseUrl, writeLimitPerMinute: config.writeLimitPerMinute });
  await app.register(assertionRoutes, { authenticate, assert: decisionAsserter({ store, clock }) });
  await app.register(keyRoutes, { authenticate, keys: new SigningKeys(store, clock) });
  await app.register(immutableRoutes, { recordExists: (id) => reads.recordExists(id) });
  const log = new LogReads(store.log, deps.logVkey ?? null, config.baseUrl);
  await app.register(publicRoutes, { reads, readLimitPerMinute: config.readLimitPerMinute, clock, log });
  if (config.adminToken) await app.register(adminRoutes, { operators, adminToken: config.adminToken });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.ready();
  return {
    app,
    decisions,
    close: async () => {
      closing = true;
      // Stops accepting and waits for in-flight requests. A keep-alive connection that finishes
      // its request while closing would otherwise hold the close open for keepAliveTimeout (72 s).
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
      await decisions.drain();
    },
  };
}
