// GET /v1/transparency: every chain head to pin, counts, anchoring, and what each guarantee
// covers and does not (interface section 4, endpoint 10).
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { cacheFor, notModified, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { TransparencyQuery, TransparencyResponse } from './schemas.ts';

export async function transparencyRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/transparency', {
    schema: {
      operationId: 'getTransparency',
      security: publicSecurity,
      summary: 'Chain heads to pin and what each guarantee covers',
      tags: PUBLIC_TAG,
      querystring: TransparencyQuery,
      response: { 200: TransparencyResponse, ...errorResponses(400, 429) },
    },
  }, async function getTransparency(request, reply) {
    cacheFor(reply, 'short');
    const [transparency, log, anchoring] = await Promise.all([options.reads.transparency(options.clock.now()), options.log.transparency(), options.anchors.transparency()]);
    const document = { ...transparency, anchoring, log };
    // The ETag names what the document says, not when it was said: generated_at changes every time.
    const { generated_at: _generatedAt, ...content } = document;
    const tag = `W/"${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 32)}"`;
    reply.header('etag', tag);
    if (notModified(request, tag)) return (reply as FastifyReply).code(304).send();
    return document;
  });
  preflightRoute(app, '/v1/transparency');
}
