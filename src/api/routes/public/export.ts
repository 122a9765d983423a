// GET /v1/export?agent=<handle>: the complete export of one agent's records, streamed as NDJSON
// (interface section 4, endpoint 9). The body is never held whole: the store is read a page at a
// time as the client reads.
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { sendError } from '../../errors.ts';
import { cacheFor, notModified, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { exportBody } from './bodies.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { EXPORT_DESCRIPTION, ExportQuery } from './schemas.ts';
import { pacedLines } from '../../../runtime/loop-share.ts';

export async function exportRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/export', {
    schema: {
      operationId: 'exportChain',
      security: publicSecurity,
      summary: 'Export one agent\'s complete record (NDJSON, streamed)',
      description: EXPORT_DESCRIPTION,
      tags: PUBLIC_TAG,
      querystring: ExportQuery,
      produces: ['application/x-ndjson'],
      response: {
        200: Type.String({ description: 'NDJSON: a header line, then one line per record in chain order.' }),
        ...errorResponses(400, 404, 429),
      },
    },
  }, async function exportChain(request, reply) {
    const handle = request.query.agent;
    const exported = await options.reads.export(handle, options.prices.exportAnnotations());
    if (!exported.ok) return sendError(request, reply, exported.error);
    const { etag, lines } = exportBody(exported.value);
    const raw = reply as FastifyReply; // 304 and a stream are outside the documented 200 schema
    raw.header('etag', etag);
    cacheFor(reply, 'revalidate');
    if (notModified(request, etag)) {
      await lines.return(undefined);
      return raw.code(304).send();
    }
    raw.header('content-disposition', `attachment; filename="${handle}.ndjson"`);
    raw.type('application/x-ndjson; charset=utf-8');
    return raw.send(Readable.from(pacedLines(lines), { objectMode: false }));
  });
  preflightRoute(app, '/v1/export');
}
