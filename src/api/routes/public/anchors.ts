// The anchors of the global log's checkpoints (log_v1 §5): `GET /v1/anchors` (newest first, paged)
// and `GET /v1/anchors/<tree size>.ots` (the OpenTimestamps file). Public.
import { Type } from '@sinclair/typebox';
import { OTS_MEDIA_TYPE, type AnchorReads } from '../../../anchor/reads.ts';
import { errors } from '../../../domain/errors.ts';
import { sendError } from '../../errors.ts';
import { preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { AnchorView } from './anchor-schemas.ts';
import type { PublicRouteOptions } from './options.ts';

const ANCHOR_TAG = ['log'];
const AnchorsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'At most 200, default 50.' }),
  cursor: Type.Optional(Type.Integer({ minimum: 1, description: 'A tree size: the page holds older anchors (smaller tree sizes). Take it from next_cursor.' })),
}, { additionalProperties: false });

const AnchorsResponse = Type.Object({
  object: Type.Literal('list'),
  url: Type.Literal('/v1/anchors'),
  data: Type.Array(AnchorView, { description: 'Newest (largest tree size) first.' }),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.Integer(), Type.Null()]),
  next: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
}, { description: 'Every anchor of the global log\'s checkpoints, newest first.' });

export async function anchorRoutes(app: App, options: PublicRouteOptions & { anchors: AnchorReads }): Promise<void> {
  const { anchors } = options;

  app.get('/v1/anchors', {
    schema: {
      operationId: 'listAnchors',
      summary: 'The Bitcoin anchors of the global log\'s checkpoints',
      tags: ANCHOR_TAG,
      security: [],
      querystring: AnchorsQuery,
      response: { 200: AnchorsResponse, ...errorResponses(400, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'public, max-age=5');
    return anchors.list(request.query.limit, request.query.cursor);
  });
  preflightRoute(app, '/v1/anchors');

  app.get('/v1/anchors/:file', {
    schema: {
      operationId: 'getAnchorFile',
      summary: 'The OpenTimestamps file of one anchored checkpoint',
      description: 'A standard DetachedTimestampFile (`.ots`, version 1) for SHA-256 of the checkpoint body. Pending while the calendars hold it; once confirmed it ends in a BitcoinBlockHeaderAttestation. Any OpenTimestamps client reads it (`ots info`).',
      tags: ANCHOR_TAG,
      security: [],
      params: Type.Object({ file: Type.String({ pattern: '^[1-9][0-9]{0,15}\\.ots$', description: '<tree size>.ots' }) }),
      response: { 200: { description: 'The .ots file.', content: { [OTS_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses(404, 429) },
    },
  }, async (request, reply) => {
    const treeSize = Number(request.params.file.slice(0, -'.ots'.length));
    const file = await anchors.file(treeSize);
    if (!file) return sendError(request, reply, errors.notFound(`no anchor of the checkpoint of tree size ${treeSize}`, 'file'));
    reply.header('cache-control', file.status === 'confirmed' ? 'public, max-age=31536000, immutable' : 'public, max-age=60');
    return reply.type(OTS_MEDIA_TYPE).send(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength) as never);
  });
  preflightRoute(app, '/v1/anchors/:file');
}
