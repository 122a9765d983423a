// Liveness and readiness for load balancers and orchestrators. /readyz also carries the pricing
// job's status (`pricing`): informative only, pricing never makes a node unready.
import type { PricingStatus } from '../../market/pricing.ts';
import type { App } from '../types.ts';

/** A database that does not answer a ping within this is not ready: /readyz answers 503 in bounded time. */
const READY_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

type HealthOptions = { ping: () => Promise<void>; isClosing: () => boolean; rateLimitsDegraded: () => boolean; pricing?: (() => PricingStatus) | undefined };

export async function healthRoutes(app: App, options: HealthOptions): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async function healthz() {
    return { status: 'ok' };
  });
  app.get('/readyz', { schema: { hide: true } }, async function readyz(_request, reply) {
    if (options.isClosing()) return reply.code(503).send({ status: 'closing' });
    try {
      await withTimeout(options.ping(), READY_TIMEOUT_MS);
      // Still ready without Redis (each process counts its own rate-limit budget), but said so.
      const pricing = options.pricing ? { pricing: options.pricing() } : {};
      if (options.rateLimitsDegraded()) return { status: 'degraded', rate_limits: 'per-process: Redis is unreachable', ...pricing };
      return { status: 'ready', ...pricing };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
