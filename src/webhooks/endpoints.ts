// The webhooks wing's use cases for an agent: register an endpoint (its signing secret made here,
// shown once, stored sealed by the vault), list them, disable one, and read one's delivery log.
// An agent sees and changes only its own endpoints; another agent's is not found.
import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import type { Agent } from '../domain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { reseal, seal, sealedAad, unseal, type Keyring } from '../vault/vault.ts';
import type { DeliveryAttempt, WebhookEndpoint, WebhookEventType, WebhookMessage, WebhookStore } from './port.ts';
import { checkHost, checkUrlShape, type Resolve } from './address.ts';

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './port.ts';

const nextUlid = monotonicFactory();
export const ENDPOINT_ID_PATTERN = '^wh_[0-9A-HJKMNP-TV-Z]{26}$';
export const MESSAGE_ID_PATTERN = '^msg_[0-9A-HJKMNP-TV-Z]{26}$';
/** Active endpoints an agent may have at once: each one multiplies the deliveries of its events. */
export const MAX_ACTIVE_ENDPOINTS = 10;
export const SECRET_PREFIX = 'whsec_';

/** The vault's associated data for an endpoint's secret: it opens for this endpoint only. */
export const secretAad = (endpointId: string) => sealedAad('webhook_endpoint', endpointId);

export function endpointView(e: WebhookEndpoint) {
  return {
    object: 'webhook_endpoint' as const,
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    status: e.status,
    disabled_reason: e.disabledReason,
    created_at: e.createdAt,
    disabled_at: e.disabledAt,
  };
}

function attemptView(a: DeliveryAttempt) {
  return { attempt: a.attempt, started_at: a.startedAt, duration_ms: a.durationMs, status_code: a.statusCode, error: a.error };
}

function deliveryView(m: WebhookMessage, attempts: DeliveryAttempt[]) {
  return {
    object: 'webhook_delivery' as const,
    id: m.id,
    event_type: m.type,
    subject: m.subject,
    status: m.status,
    created_at: m.createdAt,
    attempt_count: m.attempts,
    next_attempt_at: m.status === 'pending' ? m.nextAttemptAt : null,
    delivered_at: m.deliveredAt,
    attempts: attempts.map(attemptView),
  };
}

export type EndpointView = ReturnType<typeof endpointView>;
export type DeliveryPage = { object: 'list'; data: ReturnType<typeof deliveryView>[]; next_cursor: string | null };

export type WebhookEndpointsDeps = {
  webhooks: WebhookStore;
  clock: Clock;
  keyring: () => Promise<Keyring>;
  allowPrivate: boolean;
  resolve?: Resolve;
};

export type NewEndpoint = { url: string; events: WebhookEventType[]; description?: string | undefined };

export class WebhookEndpoints {
  constructor(private readonly deps: WebhookEndpointsDeps) {}

  async create(agent: Agent, input: NewEndpoint): Promise<Result<EndpointView & { secret: string }>> {
    const shape = checkUrlShape(input.url);
    if (!shape.ok) return fail(errors.invalidRequest(shape.reason, 'url'));
    // Where private addresses are allowed there is nothing to check before delivery time.
    if (!this.deps.allowPrivate) {
      const host = await checkHost(shape.url.hostname, false, this.deps.resolve);
      if (!host.ok) return fail(errors.invalidRequest(`url: ${host.reason}`, 'url'));
    }
    const active = (await this.deps.webhooks.listEndpoints(agent.id)).filter((e) => e.status === 'active');
    if (active.length >= MAX_ACTIVE_ENDPOINTS) {
      return fail(errors.invalidRequest(`an agent may have at most ${MAX_ACTIVE_ENDPOINTS} active webhook endpoints; disable one first`));
    }
    let ring: Keyring;
    try {
      ring = await this.deps.keyring();
    } catch (err) {
      return fail(errors.internalError(`the master key cannot be loaded: ${(err as Error).message}`));
    }
    const id = 'wh_' + nextUlid();
    const secret = SECRET_PREFIX + randomBytes(32).toString('base64');
    const endpoint: WebhookEndpoint = {
      id, agentId: agent.id, url: shape.url.href, events: [...new Set(input.events)], description: input.description ?? null,
      secret: { sealed: seal(ring, secretAad(id), secret), keyVersion: ring.current.version },
      status: 'active', disabledReason: null, createdAt: this.deps.clock.now().toISOString(), disabledAt: null,
    };
    await this.deps.webhooks.createEndpoint(endpoint);
    return ok({ ...endpointView(endpoint), secret });
  }

  async list(agent: Agent): Promise<EndpointView[]> {
    return (await this.deps.webhooks.listEndpoints(agent.id)).map(endpointView);
  }

  async disable(agent: Agent, id: string): Promise<Result<EndpointView>> {
    const found = await this.own(agent, id);
    if (!found.ok) return found;
    await this.deps.webhooks.disableEndpoint(id, 'disabled_by_agent', this.deps.clock.now().toISOString());
    return ok(endpointView((await this.deps.webhooks.findEndpoint(id)) as WebhookEndpoint));
  }

  /** The endpoint's deliveries newest first; `cursor` (a message id) pages to older ones. */
  async deliveries(agent: Agent, id: string, page: { limit: number; cursor?: string | undefined }): Promise<Result<DeliveryPage>> {
    const found = await this.own(agent, id);
    if (!found.ok) return found;
    let beforeSeq: number | undefined;
    if (page.cursor !== undefined) {
      const at = await this.deps.webhooks.findMessage(page.cursor);
      if (!at || at.endpointId !== id) return fail(errors.invalidRequest('cursor is not a delivery of this endpoint', 'cursor'));
      beforeSeq = at.seq;
    }
    const rows = await this.deps.webhooks.messages(id, { limit: page.limit, beforeSeq });
    const last = rows[rows.length - 1];
    return ok({
      object: 'list',
      data: rows.map((r) => deliveryView(r.message, r.attempts)),
      next_cursor: rows.length === page.limit && last ? last.message.id : null,
    });
  }

  private async own(agent: Agent, id: string): Promise<Result<WebhookEndpoint>> {
    const e = await this.deps.webhooks.findEndpoint(id);
    if (!e || e.agentId !== agent.id) return fail(errors.notFound(`no webhook endpoint ${id}`, 'id'));
    return ok(e);
  }
}

/** Opens an endpoint's secret (for the deliverer); throws when it does not open. */
export async function openSecret(keyring: () => Promise<Keyring>, endpoint: WebhookEndpoint): Promise<string> {
  const opened = unseal(await keyring(), secretAad(endpoint.id), endpoint.secret.sealed);
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.value;
}

/**
 * Re-seals every endpoint secret under the keyring's current version (`ledger master-key rotate`),
 * so that older key versions can be dropped. Run again after a crash; answers how many changed.
 */
export async function resealSecrets(webhooks: WebhookStore, ring: Keyring): Promise<Result<number>> {
  let problem: string | null = null;
  const changed = await webhooks.resealSecrets((id, secret) => {
    const r = reseal(ring, secretAad(id), secret.sealed);
    if (!r.ok) {
      problem ??= `webhook endpoint ${id}: ${r.error.message}`;
      return null;
    }
    return r.value.changed ? { sealed: r.value.sealed, keyVersion: ring.current.version } : null;
  });
  return problem === null ? ok(changed) : fail(errors.internalError(problem));
}
