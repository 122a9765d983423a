// Liveness and readiness for load balancers and orchestrators.
import type { LedgerStore } from '../../store/port.ts';
import type { App } from '../app.ts';

export async function healthRoutes(app: App, o: { store: LedgerStore; isClosing: () => boolean }): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (o.isClosing()) return reply.code(503).send({ status: 'closing' });
    try {
      await o.store.ping();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
