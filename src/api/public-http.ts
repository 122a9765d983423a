// HTTP hygiene of the public reads (profile, chain, proof, ledger, export, transparency):
// open CORS, ETag with 304 on If-None-Match, Cache-Control, compression, and a per-IP read rate
// limit. Installed inside the public routes' own plugin context, so none of it touches the
// authenticated endpoints.
//
// Libraries: @fastify/etag (a weak ETag over the exact body; honours an ETag a route sets
// itself, as the streamed export does) and @fastify/compress (br/gzip/deflate negotiation,
// streams included). CORS is a two-header hook plus preflight routes: a public, credential-free
// GET needs only `Access-Control-Allow-Origin: *`, which does not justify a plugin whose
// preflight route would also answer for the authenticated paths.
import compress from '@fastify/compress';
import etag from '@fastify/etag';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { App } from './types.ts';
import { readGateHooks, type ReadGate } from './read-gate.ts';
import { readCacheHooks, type ReadCache } from './read-cache.ts';
import { openToAnyOrigin } from './cors.ts';
import { handOffReads, type ReadHandoff } from './read-handoff.ts';
import { refuseSlowly, type Tarpit } from './tarpit.ts';


/** JSON, NDJSON (the export) and text. */
const COMPRESSIBLE = /^text\/|\/(?:x-nd)?json(?:;|$)|\+json(?:;|$)/;

/** Compress bodies above this size (bytes). */
const COMPRESS_THRESHOLD = 1024;

/**
 * What bounds a public read: the per-minute budget per IP (none in a read thread: the serving
 * thread counted it), and the gate (concurrency, read-gate.ts); then where it is answered.
 * `onReadThread`: this app is a read thread's, whose time is the reads' own: it compresses every
 * buffered body on its own thread rather than on the thread pool, which the record path's WAL
 * fsyncs share.
 */
export type ReadLimits = { readLimitPerMinute: number | undefined; gate: ReadGate; handoff?: ReadHandoff | null; onReadThread?: boolean };

/** A read thread compresses buffered bodies up to this size inline; bigger ones, and streams, on the thread pool. */
const INLINE_COMPRESSION_MAX_BYTES = 64 * 1024 * 1024;

/** The public reads' HTTP, with the read cache (read-cache.ts) answering while reads queue. */
export async function installPublicHttp(app: App, options: ReadLimits & { cache: ReadCache }): Promise<void> {
  app.addHook('onRequest', async (_request, reply) => {
    openToAnyOrigin(reply);
  });
  const cacheHooks = readCacheHooks(options.cache, { types: COMPRESSIBLE, minBytes: COMPRESS_THRESHOLD });
  installReadLimits(app, { ...options, beforeGate: cacheHooks.answer });
  // Order matters: the ETag is taken over the uncompressed body, before compression runs; the
  // cache keeps the body with its ETag, and compresses its copy itself.
  await app.register(etag, { weak: true });
  app.addHook('onSend', cacheHooks.keep);
  await app.register(compress, {
    global: true, threshold: COMPRESS_THRESHOLD, encodings: ['br', 'gzip', 'deflate'], customTypes: COMPRESSIBLE,
    ...(options.onReadThread ? { syncThreshold: INLINE_COMPRESSION_MAX_BYTES } : {}),
  });
}

/** Answers CORS preflight for a public path (GET and HEAD only, no credentials). */
export function preflightRoute(app: App, url: string): void {
  app.options(url, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('access-control-allow-methods', 'GET, HEAD, OPTIONS');
    reply.header('access-control-allow-headers', 'If-None-Match, Accept, Accept-Encoding');
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });
}

/**
 * Puts this plugin context's routes under the read rate limit, then the read gate: a client past
 * its budget is refused before it takes a turn. Without `readLimitPerMinute`, the gate alone.
 * `beforeGate` answers, when it can, before a turn is taken (the read cache).
 */
export function installReadLimits(app: App, options: Partial<ReadLimits> & Pick<ReadLimits, 'gate'> & { beforeGate?: onRequestHookHandler }): void {
  if (options.readLimitPerMinute !== undefined) app.addHook('onRequest', readRateLimit(app, options.readLimitPerMinute, options.gate.tarpit));
  if (options.beforeGate) app.addHook('onRequest', options.beforeGate);
  for (const hook of readGateHooks(options.gate)) app.addHook('onRequest', hook);
  if (options.handoff) app.addHook('onRequest', handOffReads(options.handoff));
}

/**
 * The read rate limit: `max` requests per minute per client IP, ONE budget across every public
 * read. It runs on the already-registered @fastify/rate-limit plugin's own store (memory, or
 * Redis when the service has one, so every node shares it). A per-route `config.rateLimit` would
 * not do: the plugin gives each route its own child store, so routes could not share a budget.
 * The IP is the socket's peer unless fastify is told to trust a proxy. Its refusals wait in the
 * read gate's tarpit like the gate's own.
 */
function readRateLimit(app: App, max: number, tarpit: Tarpit) {
  const limit = app.rateLimit({ max, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => `read:${request.ip}` });
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      await limit.call(app, request, reply);
    } catch (refusal) {
      await refuseSlowly(tarpit, request, reply, refusal);
    }
  };
}

/**
 * Cache-Control of public reads. `short` views change as agents record (profile, first pages,
 * heads); `proof` shows one immutable record plus the agent's head; `revalidate` (the export)
 * is always checked against its ETag.
 */
export const CACHE = {
  short: 'public, max-age=5',
  proof: 'public, max-age=60',
  revalidate: 'public, no-cache',
} as const;

export function cacheFor(reply: FastifyReply, policy: keyof typeof CACHE): FastifyReply {
  return reply.header('cache-control', CACHE[policy]);
}


/** True when If-None-Match names `tag` (weak comparison, as RFC 9110 prescribes for GET). */
export function notModified(request: FastifyRequest, tag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === opaque(tag));
}
