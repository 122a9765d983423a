// Liveness and readiness for load balancers and orchestrators.
import type { App } from '../types.ts';

export async function healthRoutes(app: App, options: { ping: () => Promise<void>; isClosing: () => boolean }): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async function healthz() {
    return { status: 'ok' };
  });
  app.get('/readyz', { schema: { hide: true } }, async function readyz(_request, reply) {
    if (options.isClosing()) return reply.code(503).send({ status: 'closing' });
    try {
      await options.ping();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
