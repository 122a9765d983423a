// The operator API under /v1/admin, guarded by LEDGER_ADMIN_TOKEN; absent (404) when unset.
import { Type } from '@sinclair/typebox';
import type { Operators } from '../../ledger/operators.ts';
import { AGENT_STATUSES, type AgentStatus, type Scope } from '../../domain/types.ts';
import { adminSecurity, requireAdmin } from '../auth.ts';
import { sendError } from '../errors.ts';
import { AgentView, ApiKeyView, Handle, NO_CONTROL_CHARACTERS, Scopes, errorResponses, stringEnum } from '../schemas.ts';
import { agentView, apiKeyView } from '../../domain/views.ts';
import type { App } from '../types.ts';

export type AdminRoutesOptions = { operators: Operators; adminToken: string };

export async function adminRoutes(app: App, options: AdminRoutesOptions): Promise<void> {
  const common = { tags: ['admin'], security: adminSecurity };
  const guard = requireAdmin(options.adminToken);
  const AgentWithKey = Type.Object({ agent: AgentView, api_key: ApiKeyView });

  app.post('/v1/admin/agents', {
    schema: {
      operationId: 'createAgent',
      ...common,
      summary: 'Create an agent and its first API key (the secret is shown once)',
      body: Type.Object({
        handle: Handle,
        display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, pattern: NO_CONTROL_CHARACTERS })),
        demo: Type.Optional(Type.Boolean()),
        scopes: Type.Optional(Scopes),
      }, { additionalProperties: false }),
      response: { 201: AgentWithKey, ...errorResponses(400, 401, 409) },
    },
    onRequest: guard,
  }, async function createAgent(request, reply) {
    const b = request.body;
    const created = await options.operators.createAgent({ handle: b.handle, displayName: b.display_name ?? null, demo: b.demo ?? false, scopes: b.scopes as Scope[] | undefined });
    if (!created.ok) return sendError(request, reply, created.error);
    const { agent, apiKey } = created.value;
    // The one response that carries the secret: no cache may keep it.
    return reply.code(201).header('cache-control', 'no-store').send({ agent: agentView(agent), api_key: apiKeyView(apiKey, agent.handle, apiKey.secret) });
  });

  app.get('/v1/admin/agents', {
    schema: { operationId: 'listAgents', ...common, summary: 'List agents', response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(AgentView) }), ...errorResponses(401) } },
    onRequest: guard,
  }, async function listAgents() {
    return ({ object: 'list' as const, data: (await options.operators.listAgents()).map(agentView) });
  });

  app.post('/v1/admin/agents/:handle/status', {
    schema: {
      operationId: 'setAgentStatus',
      ...common,
      summary: 'Pause, resume or retire an agent (retired is final)',
      params: Type.Object({ handle: Type.String() }),
      body: Type.Object({ status: stringEnum(AGENT_STATUSES) }, { additionalProperties: false }),
      response: { 200: Type.Object({ agent: AgentView }), ...errorResponses(400, 401, 404, 409) },
    },
    onRequest: guard,
  }, async function setAgentStatus(request, reply) {
    const updated = await options.operators.setStatus(request.params.handle, request.body.status as AgentStatus);
    if (!updated.ok) return sendError(request, reply, updated.error);
    return { agent: agentView(updated.value) };
  });

  app.post('/v1/admin/agents/:handle/api-keys', {
    schema: {
      operationId: 'issueApiKey',
      ...common,
      summary: 'Issue another API key for an agent (the secret is shown once)',
      params: Type.Object({ handle: Type.String() }),
      body: Type.Object({ scopes: Type.Optional(Scopes) }, { additionalProperties: false }),
      response: { 201: Type.Object({ api_key: ApiKeyView }), ...errorResponses(400, 401, 404) },
    },
    onRequest: guard,
    // The body is optional: a bare POST issues a key with every scope.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {};
    },
  }, async function issueApiKey(request, reply) {
    const issued = await options.operators.issueKey(request.params.handle, request.body.scopes as Scope[] | undefined);
    if (!issued.ok) return sendError(request, reply, issued.error);
    return reply.code(201).header('cache-control', 'no-store').send({ api_key: apiKeyView(issued.value.apiKey, issued.value.agent.handle, issued.value.apiKey.secret) });
  });

  app.post('/v1/admin/api-keys/:id/revoke', {
    schema: {
      operationId: 'revokeApiKey',
      ...common,
      summary: 'Revoke an API key (immediately; it cannot be restored)',
      params: Type.Object({ id: Type.String() }),
      response: { 200: Type.Object({ api_key: ApiKeyView }), ...errorResponses(401, 404) },
    },
    onRequest: guard,
  }, async function revokeApiKey(request, reply) {
    const revoked = await options.operators.revokeKey(request.params.id);
    if (!revoked.ok) return sendError(request, reply, revoked.error);
    const agents = await options.operators.listAgents();
    const handle = agents.find((a) => a.id === revoked.value.agentId)?.handle ?? '';
    return { api_key: apiKeyView(revoked.value, handle) };
  });
}
