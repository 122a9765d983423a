// The global log's read API (log_v1 §3): the checkpoint and the C2SP tlog-tiles paths under
// /v1/log/, and the convenience JSON proofs. Public, with the public reads' HTTP hygiene.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { errors } from '../../../domain/errors.ts';
import type { LogReads } from '../../../log/reads.ts';
import { sendError } from '../../errors.ts';
import { preflightRoute } from '../../public-http.ts';
import { errorResponses, RecordId } from '../../schemas.ts';
import type { App } from '../../types.ts';
import type { PublicRouteOptions } from './options.ts';
import { WitnessedView } from './schemas.ts';

const LOG_TAG = ['log'];

/** tlog-tiles: the checkpoint may be cached a few seconds; full tiles never change. */
const LOG_CACHE = {
  checkpoint: 'public, max-age=5',
  immutable: 'public, max-age=31536000, immutable',
  partial: 'public, max-age=5',
};

const B64_HASH = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'A 32-byte hash, standard base64.' });

const SizeParam = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

export const InclusionQuery = Type.Object({
  record_id: RecordId('The record whose inclusion is proven.'),
  tree_size: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The tree size to prove inclusion in; default the latest checkpoint\'s.' })),
}, { additionalProperties: false });

export const InclusionResponse = Type.Object({
  record_id: Type.String(),
  log_index: Type.Integer({ description: 'The record\'s zero-based index in the log.' }),
  tree_size: Type.Integer(),
  leaf_hash: B64_HASH,
  hashes: Type.Array(B64_HASH, { description: 'The inclusion path (RFC 9162 §2.1.3), the leaf\'s sibling first.' }),
  checkpoint: Type.Union([Type.String(), Type.Null()], { description: 'The signed checkpoint of tree_size, when one was published for that size.' }),
  witnessed: Type.Optional(Type.Union([WitnessedView, Type.Null()])),
}, { description: 'leaf_hash = SHA-256(0x00 || canon_v1(chain entry)); the path leads from it to the root of the tree of tree_size leaves.' });

export const ConsistencyQuery = Type.Object({
  from: SizeParam('The older tree size (at least 1).'),
  to: SizeParam('The newer tree size (at most the latest checkpoint\'s).'),
}, { additionalProperties: false });

export const ConsistencyResponse = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  hashes: Type.Array(B64_HASH, { description: 'The consistency proof (RFC 9162 §2.1.4); empty when from = to.' }),
}, { description: 'Proves that the tree of `from` leaves is a prefix of the tree of `to` leaves.' });

const TILE_DESCRIPTION = [
  'C2SP tlog-tiles. `<N>` is the tile index as zero-padded 3-digit path elements, all but the last prefixed with `x`',
  '(1234067 -> x001/x234/067); `.p/<W>` names a partial tile of W (1..255) entries. A hash tile is W concatenated',
  '32-byte hashes; an entry bundle is W leaf data (canon_v1 chain entries), each as a big-endian uint16 length then the',
  'bytes. Full tiles never change (cached a year); a tile the log has not reached is a 404.',
].join(' ');

const Binary = { description: 'The tile bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };

function sendTile(reply: FastifyReply, bytes: Uint8Array, full: boolean): FastifyReply {
  reply.header('cache-control', full ? LOG_CACHE.immutable : LOG_CACHE.partial);
  return reply.type('application/octet-stream').send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

export async function logRoutes(app: App, options: PublicRouteOptions & { log: LogReads }): Promise<void> {
  const { log } = options;

  app.get('/v1/log/checkpoint', {
    schema: {
      operationId: 'getLogCheckpoint',
      summary: 'The global log\'s latest signed checkpoint',
      description: 'A C2SP tlog-checkpoint (signed note): origin, tree size and base64 root, then the log\'s Ed25519 signature line. Verify it with the vkey on /v1/transparency. With a witness policy, the signature lines of every witness cosignature received for it follow (C2SP tlog-cosignature; docs/witnesses.md). 404 while the log is empty (an empty log publishes no checkpoint).',
      tags: LOG_TAG,
      security: [],
      response: { 200: { description: 'The checkpoint note.', content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } } }, ...errorResponses(404, 429) },
    },
  }, async (request, reply) => {
    const checkpoint = await log.checkpoint();
    if (!checkpoint) return sendError(request, reply, errors.notFound('the log is empty: no checkpoint is published yet'));
    reply.header('cache-control', LOG_CACHE.checkpoint);
    return reply.type('text/plain; charset=utf-8').send(checkpoint.note);
  });
  preflightRoute(app, '/v1/log/checkpoint');

  app.get('/v1/log/tile/*', {
    schema: {
      operationId: 'getLogTile',
      summary: 'A hash tile or an entry bundle of the global log',
      description: `Paths \`/v1/log/tile/<L>/<N>[.p/<W>]\` (L = 0..63) and \`/v1/log/tile/entries/<N>[.p/<W>]\`. ${TILE_DESCRIPTION}`,
      tags: LOG_TAG,
      security: [],
      params: Type.Object({ '*': Type.String({ description: 'The tile path after /v1/log/tile/, e.g. 0/x001/234.p/5 or entries/000.' }) }),
      response: { 200: Binary, ...errorResponses(404, 429) },
    },
  }, async (request, reply) => {
    const tile = await log.tile(`tile/${request.params['*']}`);
    if (!tile.ok) return sendError(request, reply, tile.error);
    return sendTile(reply, tile.value.bytes, tile.value.full);
  });
  preflightRoute(app, '/v1/log/tile/*');

  app.get('/v1/log/proof/inclusion', {
    schema: {
      operationId: 'getLogInclusionProof',
      summary: 'A record\'s inclusion proof in the global log',
      tags: LOG_TAG,
      security: [],
      querystring: InclusionQuery,
      response: { 200: InclusionResponse, ...errorResponses(400, 404, 429) },
    },
  }, async (request, reply) => {
    const proof = await log.inclusion(request.query.record_id, request.query.tree_size);
    if (!proof.ok) return sendError(request, reply, proof.error);
    reply.header('cache-control', LOG_CACHE.checkpoint);
    return proof.value;
  });
  preflightRoute(app, '/v1/log/proof/inclusion');

  app.get('/v1/log/proof/consistency', {
    schema: {
      operationId: 'getLogConsistencyProof',
      summary: 'A consistency proof between two tree sizes of the global log',
      tags: LOG_TAG,
      security: [],
      querystring: ConsistencyQuery,
      response: { 200: ConsistencyResponse, ...errorResponses(400, 429) },
    },
  }, async (request, reply) => {
    const proof = await log.consistency(request.query.from, request.query.to);
    if (!proof.ok) return sendError(request, reply, proof.error);
    reply.header('cache-control', proof.value.to === proof.value.from ? LOG_CACHE.checkpoint : LOG_CACHE.immutable);
    return proof.value;
  });
  preflightRoute(app, '/v1/log/proof/consistency');
}
