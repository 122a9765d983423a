// The calling agent's Ed25519 signing keys: register (interface section 4, endpoint 4), list, read
// and revoke (section 5.6 leaves the revoke endpoint open; it is POST /v1/keys/{key_id}/revoke).
// Every key route needs the `keys:write` scope, reads included: managing signing keys is one
// capability, kept apart from recording (`decisions:write`) and reading decisions.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isJsonObject } from '../../core/json.ts';
import { errors } from '../../domain/errors.ts';
import { LABEL_MAX_LENGTH, type SigningKeys } from '../../ledger/keys.ts';
import type { SigningKey } from '../../domain/types.ts';
import type { Authenticate } from '../../ledger/auth.ts';
import { bearerSecurity, holderOf, requireKey } from '../auth.ts';
import { sendError } from '../errors.ts';
import { errorResponses } from '../schemas.ts';
import type { App } from '../types.ts';

export type KeyRoutesOptions = { authenticate: Authenticate; keys: SigningKeys };

export const SigningKeyView = Type.Object({
  object: Type.Literal('signing_key'),
  id: Type.String({ description: 'The key_id: aid_ followed by a ULID. Put it in signature.key_id.' }),
  public_key: Type.String({ description: 'The raw 32-byte Ed25519 public key, base64url without padding.' }),
  label: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key was revoked; null while it can sign. Records it signed at or before this time stay valid.',
  }),
});

export function signingKeyView(key: SigningKey) {
  return {
    object: 'signing_key' as const,
    id: key.id,
    public_key: key.publicKey,
    label: key.label,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}

const RegisterKeyRequest = Type.Object({
  public_key: Type.String({
    minLength: 1,
    maxLength: 8192,
    description: 'The raw 32-byte Ed25519 public key, base64url without padding (43 characters). Never a private key, never PEM.',
  }),
  label: Type.String({ minLength: 1, maxLength: LABEL_MAX_LENGTH, description: 'Names the key for its owner; 1 to 200 characters, one line.' }),
}, { additionalProperties: false });

const KeyIdParams = Type.Object({ key_id: Type.String({ maxLength: 100, description: 'A key id (aid_...).' }) });

const PRIVATE_LOOKING_FIELD = /priv|secret|seed|pem/i;

/** A body field that names a private key gets its own refusal, before the schema's "not a known field". */
function refusePrivateKeyFields(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  const body = request.body;
  const named = body && typeof body === 'object' ? Object.keys(body).find((k) => PRIVATE_LOOKING_FIELD.test(k)) : undefined;
  if (named !== undefined) {
    sendError(request, reply, errors.invalidRequest(`${named} is not accepted: the service never takes a private key. Send only public_key (the raw 32-byte public key, base64url) and label.`, named));
    return;
  }
  done();
}

/** Revoking takes no body: none, or an empty JSON object. */
function refuseRevokeBody(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  const body = request.lossless;
  if (body !== undefined && !(isJsonObject(body) && Object.keys(body).length === 0)) {
    const first = isJsonObject(body) ? Object.keys(body)[0]! : 'body';
    sendError(request, reply, errors.invalidRequest('revoking a key takes no body (send none, or {})', first));
    return;
  }
  done();
}

export async function keyRoutes(app: App, options: KeyRoutesOptions): Promise<void> {
  const guard = requireKey(options.authenticate, 'keys:write');
  const common = { tags: ['keys'], security: bearerSecurity };

  app.post('/v1/keys', {
    schema: {
      operationId: 'registerSigningKey',
      ...common,
      summary: 'Register an Ed25519 public key for signing decisions',
      description: 'Registers the raw 32-byte public key (base64url). Wrong length or encoding, a point not on the curve, a small-order point, a PEM or anything looking like a private key is refused with 400 invalid_request, param public_key. Registering the same public key again returns the key already held (200) instead of a second one (201). Needs the keys:write scope.',
      body: RegisterKeyRequest,
      response: { 201: SigningKeyView, 200: SigningKeyView, ...errorResponses(400, 401, 403, 413, 415) },
    },
    onRequest: guard,
    preValidation: refusePrivateKeyFields,
  }, async function registerSigningKey(request, reply) {
    const registered = await options.keys.register(holderOf(request).agent, { publicKey: request.body.public_key, label: request.body.label });
    if (!registered.ok) return sendError(request, reply, registered.error);
    return reply.code(registered.value.created ? 201 : 200).send(signingKeyView(registered.value.key));
  });

  app.get('/v1/keys', {
    schema: {
      operationId: 'listSigningKeys',
      ...common,
      summary: "List the calling agent's signing keys, revoked ones included",
      description: 'Needs the keys:write scope (key management is one capability).',
      response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(SigningKeyView) }), ...errorResponses(401, 403) },
    },
    onRequest: guard,
  }, async function listSigningKeys(request) {
    return ({
    object: 'list' as const,
    data: (await options.keys.list(holderOf(request).agent)).map(signingKeyView),
  });
  });

  app.get('/v1/keys/:key_id', {
    schema: {
      operationId: 'getSigningKey',
      ...common,
      summary: 'One of the calling agent\'s signing keys',
      params: KeyIdParams,
      response: { 200: SigningKeyView, ...errorResponses(401, 403, 404) },
    },
    onRequest: guard,
  }, async function getSigningKey(request, reply) {
    const found = await options.keys.find(holderOf(request).agent, request.params.key_id);
    if (!found.ok) return sendError(request, reply, found.error);
    return signingKeyView(found.value);
  });

  app.post('/v1/keys/:key_id/revoke', {
    schema: {
      operationId: 'revokeSigningKey',
      ...common,
      summary: 'Revoke a signing key',
      description: 'The key signs nothing new from now on; decisions it signed stay signed and verifiable (revoked_at is never before their recorded_at). Idempotent: revoking again returns the key with its first revoked_at. No body. Another agent\'s key id is 404, like an unknown one.',
      params: KeyIdParams,
      response: { 200: SigningKeyView, ...errorResponses(400, 401, 403, 404) },
    },
    onRequest: guard,
    preValidation: refuseRevokeBody,
  }, async function revokeSigningKey(request, reply) {
    const revoked = await options.keys.revoke(holderOf(request).agent, request.params.key_id);
    if (!revoked.ok) return sendError(request, reply, revoked.error);
    return signingKeyView(revoked.value);
  });
}
