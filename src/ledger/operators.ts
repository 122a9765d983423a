// What a self-hoster does to run the service: create agents, change their status, issue and
// revoke API keys. Shared by the admin API and the `ledger` CLI. A key's secret is returned
// once, at creation; only its SHA-256 is stored.
import type { Agent, AgentStatus, ApiKey, Scope } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import { ALL_SCOPES } from '../domain/types.ts';
import { HANDLE_PATTERN, isHandle } from '../domain/handle.ts';
import type { Clock } from '../domain/clock.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { agentId, apiKeyId, apiKeySecret, secretHash } from './ids.ts';


export type IssuedKey = ApiKey & { secret: string };

/**
 * Control characters, and the bidirectional controls a name could be made to render as another
 * with (UTS #39 suggests refusing them in identifiers): refused in a display name. Names stored
 * before this rule keep them; the site shows them as marked code points (docs/site.md).
 */
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

function displayNameProblem(name: string | null): string | null {
  if (name === null) return null;
  if (CONTROL.test(name)) return 'display_name cannot hold control characters (line breaks, tabs, NUL)';
  if (BIDI_CONTROL.test(name)) return 'display_name cannot hold bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069): they can make a name render as another';
  return null;
}

export class Operators {
  constructor(private readonly store: LedgerStore, private readonly clock: Clock) {}

  async createAgent(input: { handle: string; displayName?: string | null; demo?: boolean; scopes?: Scope[] }): Promise<Result<{ agent: Agent; apiKey: IssuedKey }>> {
    if (!isHandle(input.handle)) return fail(errors.invalidRequest(`handle must match ${HANDLE_PATTERN}`, 'handle'));
    const nameProblem = displayNameProblem(input.displayName ?? null);
    if (nameProblem !== null) return fail(errors.invalidRequest(nameProblem, 'display_name'));
    const scopes = checkScopes(input.scopes);
    if (!scopes.ok) return scopes;
    if (await this.store.findAgentByHandle(input.handle)) {
      return fail(errors.handleTaken(`an agent with handle ${input.handle} already exists`, 'handle'));
    }
    const now = this.clock.now().toISOString();
    const agent: Agent = { id: agentId(), handle: input.handle, displayName: input.displayName ?? null, status: 'active', demo: input.demo ?? false, createdAt: now };
    const { key, stored } = newKey(agent.id, scopes.value, now);
    try {
      await this.store.createAgent(agent, stored);
    } catch (err) {
      // Two creators raced for one handle: the unique index decided.
      if (await this.store.findAgentByHandle(input.handle)) {
        return fail(errors.handleTaken(`an agent with handle ${input.handle} already exists`, 'handle'));
      }
      throw err;
    }
    return ok({ agent, apiKey: key });
  }

  async findAgent(handle: string): Promise<Result<Agent>> {
    const agent = await this.store.findAgentByHandle(handle);
    return agent ? ok(agent) : fail(errors.notFound(`no agent with handle ${handle}`, 'handle'));
  }

  listAgents(): Promise<Agent[]> {
    return this.store.listAgents();
  }

  /** active <-> paused; retired is final (a retired agent keeps its history and records nothing more). */
  async setStatus(handle: string, status: AgentStatus): Promise<Result<Agent>> {
    const found = await this.findAgent(handle);
    if (!found.ok) return found;
    const agent = found.value;
    if (agent.status === 'retired' && status !== 'retired') {
      return fail(errors.agentRetired(`agent ${handle} is retired; retirement is final`, 'status'));
    }
    if (agent.status !== status) await this.store.setAgentStatus(agent.id, status);
    return ok({ ...agent, status });
  }

  async issueKey(handle: string, requested?: Scope[]): Promise<Result<{ agent: Agent; apiKey: IssuedKey }>> {
    const found = await this.findAgent(handle);
    if (!found.ok) return found;
    const scopes = checkScopes(requested);
    if (!scopes.ok) return scopes;
    const { key, stored } = newKey(found.value.id, scopes.value, this.clock.now().toISOString());
    await this.store.createApiKey(stored);
    return ok({ agent: found.value, apiKey: key });
  }

  async listKeys(handle?: string): Promise<Result<ApiKey[]>> {
    if (!handle) return ok(await this.store.listApiKeys());
    const found = await this.findAgent(handle);
    if (!found.ok) return found;
    return ok(await this.store.listApiKeys(found.value.id));
  }

  async revokeKey(id: string): Promise<Result<ApiKey>> {
    const key = await this.store.findApiKey(id);
    if (!key) return fail(errors.notFound(`no API key with id ${id}`, 'id'));
    if (key.revokedAt) return ok(key);
    const at = this.clock.now().toISOString();
    await this.store.revokeApiKey(id, at);
    return ok({ ...key, revokedAt: at });
  }
}

function checkScopes(scopes: readonly string[] | undefined): Result<Scope[]> {
  if (scopes === undefined) return ok([...ALL_SCOPES]);
  const unknown = scopes.find((s) => !ALL_SCOPES.includes(s as Scope));
  if (unknown !== undefined) return fail(errors.invalidRequest(`unknown scope ${unknown}; scopes are ${ALL_SCOPES.join(', ')}`, 'scopes'));
  if (scopes.length === 0) return fail(errors.invalidRequest('a key needs at least one scope', 'scopes'));
  return ok([...new Set(scopes as Scope[])]);
}

function newKey(agent: string, scopes: Scope[], createdAt: string) {
  const secret = apiKeySecret();
  const base: ApiKey = { id: apiKeyId(), agentId: agent, prefix: secret.slice(0, 12), scopes, createdAt, revokedAt: null };
  return { key: { ...base, secret }, stored: { ...base, secretHash: secretHash(secret) } };
}
