// POST /v1/decisions (record), GET /v1/decisions (list) and GET /v1/decisions/{id} for the
// calling agent. Interface section 4, endpoints 1 and 2.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonValue } from '../../core/json.ts';
import { isJsonObject } from '../../core/json.ts';
import { decisionResponse, type DecisionService } from '../../ledger/decisions.ts';
import { errors } from '../../domain/errors.ts';
import { hasControlCharacter } from '../../ledger/ids.ts';
import type { StoredRecord } from '../../domain/types.ts';
import type { Authenticate } from '../../ledger/auth.ts';
import { bearerSecurity, holderOf, requireKey } from '../auth.ts';
import { ApiError, sendError } from '../errors.ts';
import { sendJsonText } from '../json-body.ts';
import { DecisionList, DecisionListItem, DecisionRequest, DecisionResponse, RecordId, errorResponses } from '../schemas.ts';
import type { App } from '../types.ts';
import type { RefundableStore } from '../rate-limit-store.ts';
import { refundWrite, writeLimitHook } from '../write-limit.ts';

export type DecisionRoutesOptions = {
  authenticate: Authenticate;
  decisions: DecisionService;
  baseUrl: string;
  writeLimitPerMinute: number;
  /** The write budget's store (shared through Redis when the service has one). */
  writeBudget: RefundableStore;
};

const IDEMPOTENCY_KEY = 'idempotency-key';

/** How many times the request carried header `name` (Node joins repeats into one value). */
function headerCount(request: FastifyRequest, name: string): number {
  return request.raw.rawHeaders.filter((header, i) => i % 2 === 0 && header.toLowerCase() === name).length;
}

function checkIdempotencyKey(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  const key = request.headers[IDEMPOTENCY_KEY];
  if (headerCount(request, IDEMPOTENCY_KEY) > 1) {
    sendError(request, reply, errors.invalidRequest('send one Idempotency-Key header, not several', 'Idempotency-Key'));
    return;
  }
  if (key === undefined) {
    sendError(request, reply, errors.missingIdempotencyKey('POST /v1/decisions needs an Idempotency-Key header (8 to 255 characters, unique per decision)', 'Idempotency-Key'));
    return;
  }
  if (typeof key !== 'string' || key.length < 8 || key.length > 255 || hasControlCharacter(key)) {
    sendError(request, reply, errors.invalidRequest('Idempotency-Key must be one value of 8 to 255 characters, without control characters', 'Idempotency-Key'));
    return;
  }
  done();
}

export const listQuery = (max: number, fallback: number) => Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `At most ${max}; default ${fallback}.` }),
  cursor: Type.Optional(RecordId('A record id: the page holds records before it (older). Take it from next_cursor.')),
}, { additionalProperties: false });

export function listItem(record: StoredRecord, baseUrl: string) {
  return { ...decisionResponse(record, baseUrl), content: JSON.parse(record.content) as Record<string, unknown> };
}

export async function decisionRoutes(app: App, options: DecisionRoutesOptions): Promise<void> {
  const isRecordedKey = async (request: FastifyRequest) => {
    const key = request.headers[IDEMPOTENCY_KEY];
    return typeof key === 'string' && headerCount(request, IDEMPOTENCY_KEY) === 1 && options.decisions.isRecordedKey(holderOf(request).agent, key);
  };
  app.post('/v1/decisions', {
    schema: {
      operationId: 'recordDecision',
      summary: 'Record a decision',
      description: 'Hashes the decision into the agent\'s chain and answers once it is durable. Replays the original response for a repeated Idempotency-Key with the same body.',
      tags: ['decisions'],
      security: bearerSecurity,
      headers: Type.Object({ 'idempotency-key': Type.String({ minLength: 8, maxLength: 255, description: 'Unique per decision.' }) }),
      body: DecisionRequest,
      response: { 201: DecisionResponse, ...errorResponses(400, 401, 403, 409, 413, 415, 429, 500) },
    },
    onRequest: requireKey(options.authenticate, 'decisions:write'),
    preParsing: writeLimitHook({ max: options.writeLimitPerMinute, store: options.writeBudget, isRecordedKey }),
    preValidation: checkIdempotencyKey,
  }, async function recordDecision(request, reply) {
    const holder = holderOf(request);
    const body = request.lossless;
    if (!isJsonObject(body)) throw new ApiError(errors.invalidRequest('the body must be a JSON object', 'body'));
    const outcome = await options.decisions.record({
      agent: holder.agent,
      body: body as { [key: string]: JsonValue },
      idempotencyKey: request.headers[IDEMPOTENCY_KEY] as string,
    });
    if (outcome.kind === 'error') return sendError(request, reply, outcome.error);
    if (outcome.kind === 'replayed') {
      reply.header('idempotent-replayed', 'true');
      refundWrite(options.writeBudget, request, reply);
    }
    return sendJsonText((reply as FastifyReply).code(outcome.status), outcome.body);
  });

  app.get('/v1/decisions', {
    schema: {
      operationId: 'listDecisions',
      summary: "List the calling agent's decisions, newest first",
      tags: ['decisions'],
      security: bearerSecurity,
      querystring: listQuery(200, 50),
      response: { 200: DecisionList, ...errorResponses(400, 401, 403) },
    },
    onRequest: requireKey(options.authenticate, 'decisions:read'),
  }, async function listDecisions(request) {
    const holder = holderOf(request);
    const { limit, cursor } = request.query;
    const records = await options.decisions.list(holder.agent, { limit: limit + 1, before: cursor });
    const page = records.slice(0, limit);
    const hasMore = records.length > limit;
    return {
      object: 'list' as const,
      url: '/v1/decisions',
      data: page.map((r) => listItem(r, options.baseUrl)),
      has_more: hasMore,
      next_cursor: hasMore ? page[page.length - 1]!.id : null,
    };
  });

  app.get('/v1/decisions/:id', {
    schema: {
      operationId: 'getDecision',
      summary: 'One of the calling agent\'s decisions',
      tags: ['decisions'],
      security: bearerSecurity,
      params: Type.Object({ id: RecordId() }),
      response: { 200: DecisionListItem, ...errorResponses(401, 403, 404) },
    },
    onRequest: requireKey(options.authenticate, 'decisions:read'),
  }, async function getDecision(request, reply) {
    const record = await options.decisions.find(holderOf(request).agent, request.params.id);
    if (!record) {
      return sendError(request, reply, errors.notFound(`no decision ${request.params.id} for this agent`, 'id'));
    }
    return listItem(record, options.baseUrl);
  });
}
