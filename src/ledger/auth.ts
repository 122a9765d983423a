// API-key authentication per interface section 5: who is calling, and may they do this.
import type { KeyHolder, Scope } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { API_KEY_PREFIX, sameHash, secretHash } from './ids.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/** Who is calling with `authorization`, if they may act with `scope`. */
export type Authenticate = (authorization: string | undefined, scope: Scope) => Promise<Result<KeyHolder>>;

export function authenticator(store: LedgerStore): Authenticate {
  return (authorization, scope) => authenticate(store, authorization, scope);
}

async function authenticate(store: LedgerStore, authorization: string | undefined, scope: Scope): Promise<Result<KeyHolder>> {
  if (authorization === undefined || authorization.trim() === '') {
    return fail(errors.missingApiKey('no API key: send Authorization: Bearer <API_KEY>', 'Authorization'));
  }
  const secret = BEARER.exec(authorization)?.[1];
  if (!secret || !secret.startsWith(API_KEY_PREFIX) || secret.length > 128) {
    return fail(errors.invalidApiKey('the API key is not valid', 'Authorization'));
  }
  const hash = secretHash(secret);
  const holder = await store.findKeyHolder(hash);
  if (!holder || !sameHash(holder.secretHash, hash) || holder.key.revokedAt !== null) {
    return fail(errors.invalidApiKey('the API key is unknown or revoked', 'Authorization'));
  }
  if (holder.agent.status !== 'active') {
    return fail(errors.agentNotActive(`agent ${holder.agent.handle} is ${holder.agent.status} and cannot record`));
  }
  if (!holder.key.scopes.includes(scope)) {
    return fail(errors.insufficientScope(`this API key lacks the ${scope} scope`, 'Authorization'));
  }
  return ok(holder);
}
