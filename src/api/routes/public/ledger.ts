// GET /v1/ledger: every agent's records, newest first by id, paged with a cursor (interface
// section 4, endpoint 8).
import type { RecordType } from '../../../core/chain.ts';
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { ledgerPageBody } from './bodies.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { LedgerQuery, LedgerResponse } from './schemas.ts';

export async function ledgerRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/ledger', {
    schema: {
      operationId: 'listLedger',
      security: publicSecurity,
      summary: 'The public ledger: every agent\'s records, newest first',
      description: 'Demo agents\' records are hidden unless include_demo=true; naming a demo agent in `agent` without include_demo=true is a 400 on include_demo. An unknown `agent` is a 404.',
      tags: PUBLIC_TAG,
      querystring: LedgerQuery,
      response: { 200: LedgerResponse, ...errorResponses(400, 404, 429) },
    },
  }, async function listLedger(request, reply) {
    const q = request.query;
    const page = await options.reads.ledgerPage({
      limit: q.limit, cursor: q.cursor, symbol: q.symbol, agent: q.agent, type: q.type as RecordType | undefined, includeDemo: q.include_demo,
    });
    if (!page.ok) return sendError(request, reply, page.error);
    const { body, etag } = ledgerPageBody(page.value);
    cacheFor(reply, 'short').header('etag', etag); // the page's own: no hash over its megabytes
    return sendJsonText(reply, body);
  });
  preflightRoute(app, '/v1/ledger');
}
