// GET /v1/transparency: every chain head to pin, counts, anchoring, and what each guarantee
// covers and does not (interface section 4, endpoint 10).
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { PUBLIC_TAG, type PublicRouteOptions } from './options.ts';
import { TransparencyResponse } from './schemas.ts';

export async function transparencyRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/transparency', {
    schema: {
      summary: 'Chain heads to pin and what each guarantee covers',
      tags: PUBLIC_TAG,
      response: { 200: TransparencyResponse, ...errorResponses(429) },
    },
  }, async (_request, reply) => {
    cacheFor(reply, 'short');
    const [document, log] = await Promise.all([options.reads.transparency(options.clock.now()), options.log.transparency()]);
    return { ...document, log };
  });
  preflightRoute(app, '/v1/transparency');
}
