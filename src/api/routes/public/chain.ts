// GET /v1/agents/{handle}/chain: one page of an agent's hash chain, oldest first (interface
// section 4, endpoint 6), paged forward with after_seq.
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { chainPageBody } from './bodies.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { ChainQuery, ChainResponse, HandleParams } from './schemas.ts';

export async function chainRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/agents/:handle/chain', {
    schema: {
      operationId: 'getChain',
      security: publicSecurity,
      summary: 'An agent\'s hash chain, a page at a time',
      description: 'Every record\'s canon_v1 chain entry, chain_hash and (with payloads) canonical content, oldest first, so a third party can recompute the chain. Page forward with after_seq = next_after_seq until has_more is false.',
      tags: PUBLIC_TAG,
      params: HandleParams,
      querystring: ChainQuery,
      response: { 200: ChainResponse, ...errorResponses(400, 404, 429) },
    },
  }, async function getChain(request, reply) {
    const { payloads, limit, after_seq: afterSeq } = request.query;
    const page = await options.reads.chainPage({ handle: request.params.handle, afterSeq, limit, payloads });
    if (!page.ok) return sendError(request, reply, page.error);
    const { body, etag } = chainPageBody(page.value);
    cacheFor(reply, 'short').header('etag', etag); // the page's own: no hash over its megabytes
    return sendJsonText(reply, body);
  });
  preflightRoute(app, '/v1/agents/:handle/chain');
}
