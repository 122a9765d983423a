// The CORS of public answers: any origin's script may read them and their headers (no
// credentials). A leaf module, so the error paths (errors.ts) and the public plugin
// (public-http.ts) share it without importing each other.
import type { FastifyReply } from 'fastify';

/** Headers a browser script may read from a public response. */
export const EXPOSED_HEADERS = [
  'ETag', 'request-id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Link',
].join(', ');

/** Lets any origin's script read the response and its headers (no credentials): a public answer. */
export function openToAnyOrigin(reply: FastifyReply): FastifyReply {
  return reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS);
}
