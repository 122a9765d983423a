// POST /v1/decisions/assertion (interface section 4, endpoint 3): the exact string an agent signs
// for a decision, validated as POST /v1/decisions validates it. Records nothing.
import { Type } from '@sinclair/typebox';
import type { JsonValue } from '../../core/json.ts';
import { isJsonObject } from '../../core/json.ts';
import { errors } from '../../domain/errors.ts';
import type { AssertDecision } from '../../ledger/signing.ts';
import type { Authenticate } from '../../ledger/auth.ts';
import { bearerSecurity, holderOf, requireKey } from '../auth.ts';
import { ApiError, sendError } from '../errors.ts';
import { decisionFields, errorResponses } from '../schemas.ts';
import type { App } from '../types.ts';

export type AssertionRoutesOptions = { authenticate: Authenticate; assert: AssertDecision };

export const AssertionRequest = Type.Object({
  ...decisionFields,
  occurred_at: Type.String({ format: 'date-time', description: 'Required here. When the agent decided: RFC 3339 with an offset, not in the future, at most seven days old.' }),
  nonce: Type.String({ minLength: 1, maxLength: 255, description: 'Unique per signed decision of this agent; no control characters. Send it again as signature.nonce.' }),
}, { additionalProperties: false });

export const AssertionResponse = Type.Object({
  object: Type.Literal('assertion'),
  agent: Type.String({ description: 'The agent handle, as carried in the payload.' }),
  nonce: Type.String(),
  payload: Type.String({ description: 'canon_v1 of the decision\'s content document: sign this string, encoded as UTF-8, with Ed25519, exactly as it is.' }),
  content_hash: Type.String({ description: 'Lowercase hex sha256 of the payload: the content_hash the decision will be recorded with.' }),
  canonicalisation: Type.Literal('canon_v1'),
  algorithm: Type.Literal('sha256'),
  signature_algorithm: Type.Literal('Ed25519'),
});

export async function assertionRoutes(app: App, options: AssertionRoutesOptions): Promise<void> {
  app.post('/v1/decisions/assertion', {
    schema: {
      operationId: 'assertDecision',
      summary: 'Get the payload to sign for a decision',
      description: 'Takes the decision fields plus occurred_at and nonce, validates them exactly as POST /v1/decisions does, and returns the canon_v1 payload to sign and its content_hash. Records nothing. A nonce already used by a recorded decision of this agent is refused (param nonce). Then POST /v1/decisions with the same fields and signature {key_id, nonce, signature}.',
      tags: ['decisions'],
      security: bearerSecurity,
      body: AssertionRequest,
      response: { 200: AssertionResponse, ...errorResponses(400, 401, 403, 413, 415) },
    },
    onRequest: requireKey(options.authenticate, 'decisions:write'),
  }, async function assertDecision(request, reply) {
    const agent = holderOf(request).agent;
    const body = request.lossless;
    if (!isJsonObject(body)) throw new ApiError(errors.invalidRequest('the body must be a JSON object', 'body'));
    const asserted = await options.assert(agent, body as { [key: string]: JsonValue });
    if (!asserted.ok) return sendError(request, reply, asserted.error);
    return {
      object: 'assertion' as const,
      agent: agent.handle,
      nonce: request.body.nonce,
      payload: asserted.value.payload,
      content_hash: asserted.value.contentHash,
      canonicalisation: 'canon_v1' as const,
      algorithm: 'sha256' as const,
      signature_algorithm: 'Ed25519' as const,
    };
  });
}
