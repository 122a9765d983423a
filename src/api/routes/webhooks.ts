// Webhook endpoints (docs/webhooks.md): register one, list them, disable one, read one's
// delivery log. Writes need `webhooks:write`; reads `webhooks:read` (or `webhooks:write`). An
// agent's endpoints hear only that agent's events, and another agent's endpoint is 404. The
// endpoint's signing secret is in the creation answer only (Cache-Control: no-store); it is stored
// sealed and no other answer, error or log line holds it.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticate } from '../../ledger/auth.ts';
import { ENDPOINT_ID_PATTERN, MAX_ACTIVE_ENDPOINTS, MESSAGE_ID_PATTERN, WEBHOOK_EVENT_TYPES, type WebhookEndpoints, type WebhookEventType } from '../../webhooks/endpoints.ts';
import { bearerSecurity, holderOf, requireKey } from '../auth.ts';
import { sendError } from '../errors.ts';
import { errorResponses, NO_CONTROL_CHARACTERS, stringEnum } from '../schemas.ts';
import type { App } from '../types.ts';

export type WebhookRoutesOptions = { authenticate: Authenticate; endpoints: WebhookEndpoints };

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const EventType = stringEnum(WEBHOOK_EVENT_TYPES);

export const WebhookEndpointView = Type.Object({
  object: Type.Literal('webhook_endpoint'),
  id: Type.String({ description: 'wh_ followed by a ULID.' }),
  url: Type.String({ format: 'uri' }),
  events: Type.Array(EventType),
  description: nullable(Type.String()),
  status: stringEnum(['active', 'disabled'] as const),
  disabled_reason: Type.Union([stringEnum(['disabled_by_agent', 'failing'] as const), Type.Null()], {
    description: 'failing: one message failed for the whole retry schedule (3 days); its later messages are kept, unsent.',
  }),
  created_at: Type.String({ format: 'date-time' }),
  disabled_at: nullable(Type.String({ format: 'date-time' })),
}, { description: 'A webhook endpoint. Never holds its secret.' });

const CreatedEndpoint = Type.Composite([WebhookEndpointView, Type.Object({
  secret: Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]+$', description: 'The signing secret (Standard Webhooks, whsec_ and base64 of 32 bytes). Shown in this answer only: keep it.' }),
})], { description: 'The new endpoint, with its signing secret (shown once).' });

const CreateRequest = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'Where deliveries are POSTed: https (or http), a public address (no private, loopback or link-local one, checked after resolution).' }),
  events: Type.Array(EventType, { minItems: 1, uniqueItems: true, description: 'The events this endpoint receives.' }),
  description: Type.Optional(Type.String({ maxLength: 200, pattern: NO_CONTROL_CHARACTERS })),
}, { additionalProperties: false });

const Attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  started_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when no answer came." }),
  error: nullable(Type.String({ description: 'Why the attempt failed (the status, a timeout, a refused address...).' })),
});

const Delivery = Type.Object({
  object: Type.Literal('webhook_delivery'),
  id: Type.String({ description: 'The message id: the webhook-id header of every attempt (msg_ followed by a ULID).' }),
  event_type: EventType,
  subject: Type.String({ description: 'What the event is about: a record id, or a tree size.' }),
  status: stringEnum(['pending', 'delivered', 'failed'] as const),
  created_at: Type.String({ format: 'date-time' }),
  attempt_count: Type.Integer({ minimum: 0 }),
  next_attempt_at: nullable(Type.String({ format: 'date-time', description: 'When a pending message is tried next (it may wait behind an older one).' })),
  delivered_at: nullable(Type.String({ format: 'date-time' })),
  attempts: Type.Array(Attempt),
});

const DeliveryList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Delivery),
  next_cursor: nullable(Type.String({ description: 'Pass as cursor for older deliveries; null on the last page.' })),
});

const IdParams = Type.Object({ id: Type.String({ pattern: ENDPOINT_ID_PATTERN, description: 'A webhook endpoint id (wh_...).' }) });

const DeliveriesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Type.String({ pattern: MESSAGE_ID_PATTERN, description: 'A delivery id: pages to older deliveries.' })),
}, { additionalProperties: false });

/** Reads accept either scope: webhooks:read, or webhooks:write (which manages the same endpoints). */
function requireRead(authenticate: Authenticate) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let result = await authenticate(request.headers.authorization, 'webhooks:read');
    if (!result.ok && result.error.code === 'insufficient_scope') {
      result = await authenticate(request.headers.authorization, 'webhooks:write');
      if (!result.ok && result.error.code === 'insufficient_scope') {
        return sendError(request, reply, { ...result.error, message: 'this API key lacks the webhooks:read (or webhooks:write) scope' });
      }
    }
    if (!result.ok) return sendError(request, reply, result.error);
    request.holder = result.value;
  };
}

export async function webhookRoutes(app: App, options: WebhookRoutesOptions): Promise<void> {
  const { endpoints } = options;
  const write = requireKey(options.authenticate, 'webhooks:write');
  const read = requireRead(options.authenticate);
  const common = { tags: ['webhooks'], security: bearerSecurity };

  app.post('/v1/webhooks', {
    schema: {
      ...common,
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description: `Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the secret in this answer, which is never shown again (Cache-Control: no-store). A URL on a private, loopback or link-local address, or a name resolving to one, is 400 invalid_request, param url. At most ${MAX_ACTIVE_ENDPOINTS} active endpoints per agent. Needs webhooks:write.`,
      body: CreateRequest,
      response: { 201: CreatedEndpoint, ...errorResponses(400, 401, 403, 413, 415) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const b = request.body;
    const r = await endpoints.create(holderOf(request).agent, { url: b.url, events: b.events as WebhookEventType[], description: b.description });
    if (!r.ok) return sendError(request, reply, r.error);
    reply.header('cache-control', 'no-store');
    return reply.code(201).send(r.value);
  });

  app.get('/v1/webhooks', {
    schema: {
      ...common,
      operationId: 'listWebhookEndpoints',
      summary: "The calling agent's webhook endpoints",
      description: 'Active and disabled, oldest first. Never holds a secret. Needs webhooks:read or webhooks:write.',
      response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(WebhookEndpointView) }), ...errorResponses(401, 403) },
    },
    onRequest: read,
  }, async (request) => ({ object: 'list' as const, data: await endpoints.list(holderOf(request).agent) }));

  app.get('/v1/webhooks/:id/deliveries', {
    schema: {
      ...common,
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's delivery log",
      description: "Its messages newest first, each with its status, next attempt and every attempt (time, duration, the receiver's status code, the error). Kept 30 days after delivery. Another agent's endpoint is 404. Needs webhooks:read or webhooks:write.",
      params: IdParams,
      querystring: DeliveriesQuery,
      response: { 200: DeliveryList, ...errorResponses(400, 401, 403, 404) },
    },
    onRequest: read,
  }, async (request, reply) => {
    const r = await endpoints.deliveries(holderOf(request).agent, request.params.id, { limit: request.query.limit, cursor: request.query.cursor });
    if (!r.ok) return sendError(request, reply, r.error);
    return r.value;
  });

  app.post('/v1/webhooks/:id/disable', {
    schema: {
      ...common,
      operationId: 'disableWebhookEndpoint',
      summary: 'Disable a webhook endpoint',
      description: "No further deliveries; what is pending stays in the delivery log, unsent. Idempotent. Another agent's endpoint is 404. Needs webhooks:write.",
      params: IdParams,
      response: { 200: WebhookEndpointView, ...errorResponses(400, 401, 403, 404) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const r = await endpoints.disable(holderOf(request).agent, request.params.id);
    if (!r.ok) return sendError(request, reply, r.error);
    return r.value;
  });
}
