// JSON views of operator objects (agents, API keys): the only shapes that leave the service.
import type { Agent, ApiKey } from './types.ts';

export function agentView(agent: Agent) {
  return {
    object: 'agent' as const,
    id: agent.id,
    handle: agent.handle,
    display_name: agent.displayName,
    status: agent.status,
    demo: agent.demo,
    created_at: agent.createdAt,
  };
}

/** `secret` is passed only in the response that creates the key. */
export function apiKeyView(key: ApiKey, agentHandle: string, secret?: string) {
  return {
    object: 'api_key' as const,
    id: key.id,
    agent: agentHandle,
    prefix: key.prefix,
    scopes: key.scopes,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
    ...(secret === undefined ? {} : { secret }),
  };
}
