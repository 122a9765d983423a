// Route guards: API-key authentication with a required scope, and the operator's admin token.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticate } from '../ledger/auth.ts';
import { errors } from '../domain/errors.ts';
import type { KeyHolder, Scope } from '../domain/types.ts';
import { sendError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    holder: KeyHolder | null;
  }
}

/** The authenticated caller; only valid on routes guarded by requireKey. */
export function holderOf(request: FastifyRequest): KeyHolder {
  if (!request.holder) throw new Error('route is missing its requireKey guard');
  return request.holder;
}

export function requireKey(authenticate: Authenticate, scope: Scope) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const result = await authenticate(request.headers.authorization, scope);
    if (!result.ok) return sendError(request, reply, result.error);
    request.holder = result.value;
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function requireAdmin(adminToken: string) {
  const expected = digest(adminToken);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization;
    if (!header) return sendError(request, reply, errors.missingApiKey('no admin token: send Authorization: Bearer <LEDGER_ADMIN_TOKEN>', 'Authorization'));
    const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? '';
    if (!timingSafeEqual(digest(token), expected)) return sendError(request, reply, errors.invalidApiKey('the admin token is not valid', 'Authorization'));
  };
}

export const bearerSecurity = [{ bearer: [] as string[] }];
export const adminSecurity = [{ admin: [] as string[] }];
