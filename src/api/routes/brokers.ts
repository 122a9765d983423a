// Broker connections: connect Alpaca by API key, connect a brokerage through SnapTrade's
// portal, list and show connections, sync now, disconnect. Writes need `brokers:write`; reads
// `brokers:read` or `decisions:read`. No response, error or example ever holds a credential.
// The portal's redirect back (`{site_url}/brokers/snaptrade/callback`) needs no API key: a browser
// cannot send one; its single-use state token names the pending connection.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BrokerConnections } from '../../brokers/connections.ts';
import type { Authenticate } from '../../ledger/auth.ts';
import { bearerSecurity, holderOf, requireKey } from '../auth.ts';
import { sendError } from '../errors.ts';
import { errorResponses, stringEnum } from '../schemas.ts';
import type { App } from '../types.ts';

export type BrokerRoutesOptions = { authenticate: Authenticate; connections: BrokerConnections };

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Json = (description: string) => Type.Unsafe<unknown>({ description });

const SyncProgress = Type.Object({
  started_at: Type.String({ format: 'date-time' }),
  phase: Type.String(),
  fills_read: Type.Integer(),
  executions_recorded: Type.Integer(),
});

const SyncSummary = Type.Object({
  started_at: Type.String({ format: 'date-time' }),
  finished_at: Type.String({ format: 'date-time' }),
  ok: Type.Boolean(),
  counts: Type.Object({
    fills_read: Type.Integer(), executions_recorded: Type.Integer(), already_recorded: Type.Integer(), orders_read: Type.Integer(),
    linked_link_token: Type.Integer(), linked_inferred: Type.Integer({ description: 'Inferred links never count as verification.' }),
    not_fills: Type.Record(Type.String(), Type.Integer(), { description: 'SnapTrade activities that are not fills (dividends, transfers...), by type; they are recorded as activity records.' }),
    activities_read: Type.Optional(Type.Integer({ description: 'Non-trade activities read (dividends, splits, deposits, withdrawals, fees...).' })),
    activities_recorded: Type.Optional(Type.Integer({ description: 'Non-trade activities recorded as activity records in this sync (each once).' })),
  }),
  positions: Type.Integer(),
  caveats: Type.Array(Type.Object({ code: Type.String(), message: Type.String() }), {
    description: 'position_mismatch (the broker reports a position the imported fills do not add up to: history before the import, a transfer, a split), cumulative_mismatch, fill_skipped, activity_skipped.',
  }),
  error: Type.Union([Type.Object({ kind: Type.String(), message: Type.String() }), Type.Null()]),
});

export const BrokerConnectionView = Type.Object({
  object: Type.Literal('broker_connection'),
  id: Type.String({ description: 'brk_ followed by a ULID.' }),
  broker: stringEnum(['alpaca', 'snaptrade'] as const),
  environment: nullable(Type.String({ description: 'Alpaca: paper or live.' })),
  status: stringEnum(['pending', 'active', 'error', 'disconnected'] as const, {
    description: 'pending: waiting for the SnapTrade portal; error: the last sync failed (see last_error); disconnected: credentials destroyed, imported records kept.',
  }),
  accounts: Type.Array(Type.Object({
    ref: Type.String({ description: "The broker's id of the account; never its number." }),
    name: nullable(Type.String()), currency: nullable(Type.String()), institution: nullable(Type.String()),
  })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  disconnected_at: nullable(Type.String({ format: 'date-time' })),
  syncing: Type.Boolean(),
  progress: Type.Union([SyncProgress, Type.Null()]),
  last_sync: Type.Union([SyncSummary, Type.Null()]),
  last_error: nullable(Type.String()),
  positions: Type.Union([Type.Object({
    taken_at: Type.String({ format: 'date-time' }),
    reported: Json('Positions as the broker reported them.'),
    balances: Json('Balances as the broker reported them.'),
    reconciliation: Json('Per symbol: implied (from imported fills), reported, matches.'),
  }), Type.Null()], { description: 'The latest snapshot (GET of one connection only).' }),
}, { description: 'A broker connection. Never holds a credential.' });

const AlpacaRequest = Type.Object({
  api_key_id: Type.String({ minLength: 1, maxLength: 128, description: 'The Alpaca API key id.' }),
  api_secret: Type.String({ minLength: 1, maxLength: 256, description: 'The Alpaca API secret key: checked, sealed, never shown again.' }),
  environment: stringEnum(['paper', 'live'] as const),
}, { additionalProperties: false });

const SnapTradeRequest = Type.Object({
  broker: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: "SnapTrade's brokerage slug, e.g. ALPACA; omitted: the owner picks in the portal." })),
}, { additionalProperties: false });

const SnapTradeStarted = Type.Object({
  object: Type.Literal('broker_connection_link'),
  id: Type.String(),
  status: Type.Literal('pending'),
  portal_url: Type.String({ format: 'uri', description: "SnapTrade's connection portal (read-only connection). Open it in a browser; no password reaches this service." }),
  expires_at: Type.String({ format: 'date-time' }),
});

const IdParams = Type.Object({ id: Type.String({ pattern: '^brk_[0-9A-HJKMNP-TV-Z]{26}$', description: 'A connection id (brk_...).' }) });

const CallbackQuery = Type.Object({
  state: Type.String({ minLength: 1, maxLength: 200 }),
  status: Type.String({ maxLength: 40 }),
  connection_id: Type.Optional(Type.String({ maxLength: 100 })),
}, { additionalProperties: true });

/** Reads accept either scope: brokers:read, or decisions:read (which reads everything an agent recorded). */
function requireRead(authenticate: Authenticate) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let result = await authenticate(request.headers.authorization, 'brokers:read');
    if (!result.ok && result.error.code === 'insufficient_scope') {
      result = await authenticate(request.headers.authorization, 'decisions:read');
      if (!result.ok && result.error.code === 'insufficient_scope') {
        return sendError(request, reply, { ...result.error, message: 'this API key lacks the brokers:read (or decisions:read) scope' });
      }
    }
    if (!result.ok) return sendError(request, reply, result.error);
    request.holder = result.value;
  };
}

export async function brokerRoutes(app: App, options: BrokerRoutesOptions): Promise<void> {
  const { connections } = options;
  const write = requireKey(options.authenticate, 'brokers:write');
  const read = requireRead(options.authenticate);
  const common = { tags: ['brokers'], security: bearerSecurity };

  app.post('/v1/brokers/alpaca', {
    schema: {
      ...common,
      operationId: 'connectAlpaca',
      summary: 'Connect an Alpaca account, read-only',
      description: 'The key pair is checked by reading the account (GET /v2/account) before anything is stored: Alpaca refusing it is 400 invalid_request, param api_key_id; Alpaca unreachable or failing is 502 provider_error. In both cases nothing is stored. The secret is sealed (AES-256-GCM) and never returned. Needs brokers:write.',
      body: AlpacaRequest,
      response: { 201: BrokerConnectionView, ...errorResponses(400, 401, 403, 413, 415, 502) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const b = request.body;
    const r = await connections.connectAlpaca(holderOf(request).agent, { apiKeyId: b.api_key_id, apiSecret: b.api_secret, environment: b.environment as 'paper' | 'live' });
    if (!r.ok) return sendError(request, reply, r.error);
    return reply.code(201).send(r.value);
  });

  app.post('/v1/brokers/snaptrade', {
    schema: {
      ...common,
      operationId: 'connectSnapTrade',
      summary: 'Start connecting a brokerage through SnapTrade',
      description: "Registers the agent's SnapTrade user (once) and answers a link to SnapTrade's connection portal (a read-only connection, valid five minutes). The portal's redirect back completes the connection; without it, POST /v1/brokers/{id}/sync picks up the new connection. Needs brokers:write.",
      body: SnapTradeRequest,
      response: { 201: SnapTradeStarted, ...errorResponses(400, 401, 403, 413, 415, 502) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const r = await connections.connectSnapTrade(holderOf(request).agent, { broker: request.body?.broker });
    if (!r.ok) return sendError(request, reply, r.error);
    return reply.code(201).send({ object: 'broker_connection_link' as const, id: r.value.connection.id, status: 'pending' as const, portal_url: r.value.portalUrl, expires_at: r.value.expiresAt });
  });

  app.get('/brokers/snaptrade/callback', {
    schema: {
      tags: ['brokers'],
      operationId: 'snapTradeCallback',
      summary: "SnapTrade portal's redirect back",
      description: 'Needs no API key: the single-use state token (expiring with the portal link) names the pending connection. SnapTrade adds status (SUCCESS, ERROR, ABANDONED) and connection_id.',
      security: [],
      querystring: CallbackQuery,
      response: { 200: BrokerConnectionView, ...errorResponses(400, 404, 502) },
    },
  }, async (request, reply) => {
    const q = request.query;
    const r = await connections.completeSnapTrade({ state: q.state, status: q.status, connectionId: q.connection_id });
    if (!r.ok) return sendError(request, reply, r.error);
    return r.value;
  });

  app.get('/v1/brokers', {
    schema: {
      ...common,
      operationId: 'listBrokerConnections',
      summary: "The calling agent's broker connections",
      description: 'Needs brokers:read or decisions:read. Never holds a credential.',
      response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(BrokerConnectionView) }), ...errorResponses(401, 403) },
    },
    onRequest: read,
  }, async (request) => ({ object: 'list' as const, data: await connections.list(holderOf(request).agent) }));

  app.get('/v1/brokers/:id', {
    schema: {
      ...common,
      operationId: 'getBrokerConnection',
      summary: 'One broker connection: accounts, last sync, progress, latest positions',
      description: "Needs brokers:read or decisions:read. Another agent's connection is 404.",
      params: IdParams,
      response: { 200: BrokerConnectionView, ...errorResponses(400, 401, 403, 404) },
    },
    onRequest: read,
  }, async (request, reply) => {
    const r = await connections.find(holderOf(request).agent, request.params.id);
    if (!r.ok) return sendError(request, reply, r.error);
    return r.value;
  });

  app.post('/v1/brokers/:id/sync', {
    schema: {
      ...common,
      operationId: 'syncBrokerConnection',
      summary: 'Sync a connection now',
      description: 'Answers 202 at once; progress and the result show on GET /v1/brokers/{id}. A sync already running (on any node) is not doubled. Each fill is recorded once, however often this is called. Needs brokers:write.',
      params: IdParams,
      response: { 202: BrokerConnectionView, ...errorResponses(400, 401, 403, 404, 502) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const r = await connections.requestSync(holderOf(request).agent, request.params.id);
    if (!r.ok) return sendError(request, reply, r.error);
    return reply.code(202).send(r.value);
  });

  app.post('/v1/brokers/:id/disconnect', {
    schema: {
      ...common,
      operationId: 'disconnectBroker',
      summary: 'Disconnect: stop syncing and destroy the credentials',
      description: 'What was imported stays on the ledger. Idempotent. For SnapTrade, also revoke the authorization in SnapTrade\'s portal. Needs brokers:write.',
      params: IdParams,
      response: { 200: BrokerConnectionView, ...errorResponses(400, 401, 403, 404) },
    },
    onRequest: write,
  }, async (request, reply) => {
    const r = await connections.disconnect(holderOf(request).agent, request.params.id);
    if (!r.ok) return sendError(request, reply, r.error);
    return r.value;
  });
}
