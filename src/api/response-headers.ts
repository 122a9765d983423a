// The headers every response of the service carries, whichever part of it answers (a route, the
// error handler, the 404 handler, fastify's own refusals before routing): `Request-Id` (the same
// id as an error body's request_id) and `X-Content-Type-Options: nosniff`; and on every HTML
// page a Content-Security-Policy whose `frame-ancestors 'none'` keeps it out of other sites'
// frames, and a Referrer-Policy. Installed once, on the root of the app; errors.ts applies the
// same to the answers it sends where no hook runs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.ts';

/** The site's pages: only this origin's scripts, styles and data. */
export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** Request-Id and nosniff, on any response. */
export function markResponse(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.header('request-id', request.id).header('x-content-type-options', 'nosniff');
}

/** The page headers: `csp` when the page needs its own policy (still with frame-ancestors 'none'). */
export function markPage(reply: FastifyReply, csp = PAGE_CSP): FastifyReply {
  return reply.header('content-security-policy', csp).header('referrer-policy', REFERRER_POLICY);
}

const isHtml = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('text/html');

/** On the root, before any route's plugin: every route, every context, inherits both hooks. */
export function installResponseHeaders(app: App): void {
  app.addHook('onRequest', async (request, reply) => {
    markResponse(request, reply);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (isHtml(reply) && !reply.hasHeader('content-security-policy')) markPage(reply);
    return payload;
  });
}
