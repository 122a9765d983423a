// The broker connections of an agent: connect (Alpaca by API key; a brokerage through SnapTrade's
// portal), list and show them, sync on demand, disconnect; and the operator's master-key rotation.
// It owns what a connection shows (never a credential: secrets are sealed by the vault before they
// are stored and opened only inside a sync), the SnapTrade portal's single-use state, and the
// background syncs started on demand (drained on shutdown).
import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Agent, Sealed } from '../domain/types.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import type { BrokerConnection, BrokerStore, PositionSnapshot } from './port.ts';
import { checkAlpacaCredentials, type AlpacaEnvironment } from './alpaca.ts';
import { SnapTradeClient, type SnapTradeUser } from './snaptrade.ts';
import { BrokerSync, snapTradeUserAad, type ProgressListener, type SyncDeps, type SyncOutcome } from './sync.ts';
import { reseal, seal, unseal, type Keyring } from '../vault/vault.ts';

export type ConnectionsDeps = SyncDeps & { siteUrl: string };

/** How long a SnapTrade portal link (and its state token) is good for. */
export const PORTAL_LINK_MS = 5 * 60_000;

export const connectionId = () => `brk_${ulid()}`;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** What the service shows of a connection: never a credential. */
export function connectionView(c: BrokerConnection, snapshot: PositionSnapshot | null = null) {
  return {
    object: 'broker_connection' as const,
    id: c.id,
    broker: c.kind,
    environment: c.environment,
    status: c.status,
    accounts: c.accounts.map((a) => ({ ref: a.ref, name: a.name, currency: a.currency, institution: a.institution })),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    disconnected_at: c.disconnectedAt,
    syncing: c.progress !== null,
    progress: c.progress,
    last_sync: c.lastSync,
    last_error: c.lastError,
    positions: snapshot === null ? null : { taken_at: snapshot.takenAt, reported: snapshot.positions, balances: snapshot.balances, reconciliation: snapshot.reconciliation },
  };
}
export type ConnectionView = ReturnType<typeof connectionView>;

export class BrokerConnections {
  readonly syncer: BrokerSync;
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly deps: ConnectionsDeps) {
    this.syncer = new BrokerSync(deps);
  }

  private get brokers(): BrokerStore {
    return this.deps.brokers;
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Every connection a sync round visits. */
  async listSyncable(): Promise<BrokerConnection[]> {
    return (await this.brokers.listConnections()).filter((c) => c.status === 'active' || c.status === 'error');
  }

  /** Every connection, or one agent's (CLI). */
  listAll(agentId?: string): Promise<BrokerConnection[]> {
    return this.brokers.listConnections(agentId);
  }

  async list(agent: Agent): Promise<ConnectionView[]> {
    return (await this.brokers.listConnections(agent.id)).map((c) => connectionView(c));
  }

  async find(agent: Agent, id: string): Promise<Result<ConnectionView>> {
    const c = await this.owned(agent, id);
    if (!c.ok) return c;
    return ok(connectionView(c.value, await this.brokers.latestSnapshot(id)));
  }

  private async owned(agent: Agent, id: string): Promise<Result<BrokerConnection>> {
    const c = await this.brokers.findConnection(id);
    // Another agent's connection is as good as absent.
    return c && c.agentId === agent.id ? ok(c) : fail(errors.notFound(`no broker connection ${id}`));
  }

  /**
   * Checks the key pair by reading the account, then stores it sealed; on any failure nothing is
   * stored. Nothing is sent to Alpaca before the keyring that will seal the pair is known to work.
   */
  async connectAlpaca(agent: Agent, input: { apiKeyId: string; apiSecret: string; environment: AlpacaEnvironment }): Promise<Result<ConnectionView>> {
    for (const [param, value] of [['api_key_id', input.apiKeyId], ['api_secret', input.apiSecret]] as const) {
      const bad = credentialProblem(value);
      if (bad) return fail(errors.invalidRequest(`${param} ${bad}; nothing was sent to Alpaca`, param));
    }
    const ring = await this.keyringOrError();
    if (!ring.ok) return ring;
    const check = await checkAlpacaCredentials({
      credentials: { keyId: input.apiKeyId, secretKey: input.apiSecret },
      environment: input.environment,
      ...(this.deps.endpoints.alpacaUrl ? { baseUrl: this.deps.endpoints.alpacaUrl } : {}),
      ...(this.deps.endpoints.http ? { http: this.deps.endpoints.http } : {}),
    });
    if (!check.ok) {
      return check.reason === 'invalid_credentials'
        ? fail(errors.invalidRequest(check.message, check.param))
        : fail(errors.providerError(`Alpaca could not be reached or failed: ${check.message}; nothing was stored`));
    }
    const id = connectionId();
    const now = this.now();
    const connection: BrokerConnection = {
      id, agentId: agent.id, kind: 'alpaca', environment: input.environment, status: 'active',
      credentials: sealWith(ring.value, id, JSON.stringify({ api_key_id: input.apiKeyId, api_secret: input.apiSecret })),
      accounts: [{ ref: check.account.id, name: null, currency: check.account.currency, institution: 'Alpaca' }],
      externalId: null, cursor: {}, lastSync: null, progress: null, lastError: null, pendingState: null,
      createdAt: now, updatedAt: now, disconnectedAt: null,
    };
    await this.brokers.createConnection(connection);
    return ok(connectionView(connection));
  }

  /** Registers the agent's SnapTrade user once, and answers a read-only connection-portal link. */
  async connectSnapTrade(agent: Agent, input: { broker?: string | undefined }): Promise<Result<{ connection: ConnectionView; portalUrl: string; expiresAt: string }>> {
    const client = this.snapTradeClient();
    if (!client) return fail(errors.providerError('SnapTrade is not configured on this service (LEDGER_SNAPTRADE_CLIENT_ID, LEDGER_SNAPTRADE_CONSUMER_KEY)'));
    const user = await this.snapTradeUser(agent, client, true);
    if (!user.ok) return user;
    const id = connectionId();
    const state = randomBytes(24).toString('base64url');
    const expiresAt = new Date(this.deps.clock.now().getTime() + PORTAL_LINK_MS).toISOString();
    const redirect = `${this.deps.siteUrl}/brokers/snaptrade/callback?state=${state}`;
    const link = await client.loginLink(user.value, { ...(input.broker ? { broker: input.broker } : {}), customRedirect: redirect });
    if (!link.ok) return fail(errors.providerError(`SnapTrade failed: ${link.error.message}; nothing was stored`));
    const now = this.now();
    const connection: BrokerConnection = {
      id, agentId: agent.id, kind: 'snaptrade', environment: null, status: 'pending', credentials: null, accounts: [], externalId: null,
      cursor: {}, lastSync: null, progress: null, lastError: null, pendingState: { hash: sha256(state), expiresAt },
      createdAt: now, updatedAt: now, disconnectedAt: null,
    };
    await this.brokers.createConnection(connection);
    return ok({ connection: connectionView(connection), portalUrl: link.value.redirectURI, expiresAt });
  }

  /** The portal's redirect back: the state token names the pending connection, once, until it expires. */
  async completeSnapTrade(input: { state: string; status: string; connectionId?: string | undefined }): Promise<Result<ConnectionView>> {
    const c = await this.brokers.findConnectionByState(sha256(input.state));
    if (!c || c.status !== 'pending' || !c.pendingState || c.pendingState.expiresAt < this.now()) {
      return fail(errors.notFound('this connection link is unknown, used or expired: start again with POST /v1/brokers/snaptrade'));
    }
    if (input.status !== 'SUCCESS' || !input.connectionId) {
      await this.brokers.updateConnection(c.id, { status: 'disconnected', pendingState: null, lastError: `the portal ended with ${input.status}`, disconnectedAt: this.now() }, this.now());
      return fail(errors.invalidRequest(`the connection portal ended with ${input.status}; nothing was connected`, 'status'));
    }
    const done = await this.attach(c, (auths) => auths.find((a) => a.id === input.connectionId) ?? null);
    if (!done.ok) return done;
    this.startSync(c.id);
    return ok(connectionView(done.value));
  }

  /** Binds a pending SnapTrade connection to an authorization at SnapTrade and lists its accounts. */
  private async attach(
    c: BrokerConnection,
    pick: (auths: { id: string; disabled: boolean }[]) => { id: string } | null,
  ): Promise<Result<BrokerConnection>> {
    const client = this.snapTradeClient();
    if (!client) return fail(errors.providerError('SnapTrade is not configured on this service'));
    const agent = { id: c.agentId } as Agent;
    const user = await this.snapTradeUser(agent, client, false);
    if (!user.ok) return user;
    const auths = await client.authorizations(user.value);
    if (!auths.ok) return fail(errors.providerError(`SnapTrade failed: ${auths.error.message}`));
    const claimed = new Set((await this.brokers.listConnections(c.agentId)).map((x) => x.externalId).filter((x) => x !== null));
    const auth = pick(auths.value.filter((a) => !claimed.has(a.id)));
    if (!auth) return fail(errors.notFound('SnapTrade reports no such new connection for this agent'));
    const accounts = await client.accounts(user.value);
    if (!accounts.ok) return fail(errors.providerError(`SnapTrade failed: ${accounts.error.message}`));
    const mine = accounts.value.filter((a) => a.brokerage_authorization === auth.id).map((a) => ({
      ref: a.id, name: typeof a.name === 'string' ? a.name : null,
      currency: null, institution: typeof a.institution_name === 'string' ? a.institution_name : null,
    }));
    const patch = { status: 'active' as const, externalId: auth.id, accounts: mine, pendingState: null, lastError: null };
    await this.brokers.updateConnection(c.id, patch, this.now());
    return ok({ ...c, ...patch });
  }

  /** Starts a sync in the background (202): progress shows on the connection. */
  async requestSync(agent: Agent, id: string): Promise<Result<ConnectionView>> {
    const owned = await this.owned(agent, id);
    if (!owned.ok) return owned;
    let c = owned.value;
    if (c.status === 'disconnected') return fail(errors.invalidRequest('this connection is disconnected; connect again to sync', 'id'));
    if (c.kind === 'snaptrade' && c.status === 'pending') {
      // Without the portal's redirect: take the agent's newest authorization not bound yet.
      const attached = await this.attach(c, (auths) => auths[auths.length - 1] ?? null);
      if (!attached.ok) return attached;
      c = attached.value;
    }
    this.startSync(c.id);
    const now = this.now();
    return ok(connectionView({ ...c, progress: c.progress ?? { started_at: now, phase: 'queued', fills_read: 0, executions_recorded: 0 } }));
  }

  /** Runs a sync now and waits for it (CLI, worker). */
  syncNow(id: string, onProgress?: ProgressListener): Promise<SyncOutcome> {
    return this.track(this.syncer.sync(id, onProgress));
  }

  private startSync(id: string): void {
    this.track(this.syncer.sync(id)).catch((err: unknown) => {
      this.deps.log?.('error', 'broker sync crashed', { connection: id, error: (err as Error).message });
    });
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    const done = () => this.running.delete(p);
    p.then(done, done);
    return p;
  }

  /** Waits for every sync started here (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Stops syncing and destroys the credentials; imported records stay. */
  async disconnect(agent: Agent, id: string): Promise<Result<ConnectionView>> {
    const owned = await this.owned(agent, id);
    if (!owned.ok) return owned;
    return ok(await this.disconnectConnection(owned.value));
  }

  async disconnectConnection(c: BrokerConnection): Promise<ConnectionView> {
    if (c.status === 'disconnected') return connectionView(c);
    const now = this.now();
    const patch = { status: 'disconnected' as const, credentials: null, pendingState: null, progress: null, disconnectedAt: now };
    await this.brokers.updateConnection(c.id, patch, now);
    if (c.kind === 'snaptrade') {
      const others = (await this.brokers.listConnections(c.agentId)).filter((x) => x.kind === 'snaptrade' && x.id !== c.id && x.status !== 'disconnected');
      if (others.length === 0) await this.brokers.deleteUser(c.agentId, 'snaptrade');
    }
    return connectionView({ ...c, ...patch, updatedAt: now });
  }

  private snapTradeClient(): SnapTradeClient | null {
    const s = this.deps.endpoints.snaptrade;
    return s ? new SnapTradeClient({ partner: s.partner, baseUrl: s.url, ...(this.deps.endpoints.http ? { http: this.deps.endpoints.http } : {}) }) : null;
  }

  /** The keyring, or a 500 saying it cannot be used (the server refuses to start in that case, so this is rare). */
  private async keyringOrError(): Promise<Result<Keyring>> {
    try {
      return ok(await this.deps.keyring());
    } catch (err) {
      return fail(errors.internalError(`the master key cannot be used (${(err as Error).message}); nothing was sent or stored`));
    }
  }

  /** The agent's SnapTrade user, registered (once) when `register` and absent. */
  private async snapTradeUser(agent: Pick<Agent, 'id'>, client: SnapTradeClient, register: boolean): Promise<Result<SnapTradeUser>> {
    const keyring = await this.keyringOrError();
    if (!keyring.ok) return keyring;
    const ring = keyring.value;
    const stored = await this.brokers.findUser(agent.id, 'snaptrade');
    if (stored) {
      const opened = unseal(ring, snapTradeUserAad(agent.id), stored.secret.sealed);
      if (!opened.ok) return fail(errors.internalError('the stored SnapTrade user secret cannot be opened: check the master key'));
      return ok({ userId: stored.userId, userSecret: (JSON.parse(opened.value) as { user_secret: string }).user_secret });
    }
    if (!register) return fail(errors.notFound('the agent has no SnapTrade user'));
    const userId = `ledger-${agent.id}`;
    const registered = await client.registerUser(userId);
    if (!registered.ok) return fail(errors.providerError(`SnapTrade could not register the user: ${registered.error.message}`));
    const saved = await this.brokers.saveUser({
      agentId: agent.id, kind: 'snaptrade', userId: registered.value.userId, createdAt: this.now(),
      secret: sealWith(ring, snapTradeUserAad(agent.id), JSON.stringify({ user_secret: registered.value.userSecret })),
    });
    if (saved.userId !== registered.value.userId) return this.snapTradeUser(agent, client, false); // another request registered first
    return ok(registered.value);
  }
}

/** Longest credential accepted: Alpaca's key ids are 20 characters and its secrets 40; room for other issuers. */
export const MAX_CREDENTIAL_LENGTH = 256;

/**
 * What is wrong with a credential's characters, or null. Credentials travel in HTTP headers and
 * signed query strings: only printable ASCII without white space is accepted, so a pasted newline,
 * space or non-ASCII character is refused here (400) rather than failing at the broker (502).
 */
export function credentialProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_CREDENTIAL_LENGTH) return `must be at most ${MAX_CREDENTIAL_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(value)) return 'must be printable ASCII without spaces, line breaks or control characters (check for a stray character from copying)';
  return null;
}

function sealWith(ring: Keyring, aad: string, plaintext: string): Sealed {
  return { sealed: seal(ring, aad, plaintext), keyVersion: ring.current.version };
}

/**
 * Re-seals every stored secret under the keyring's current (newest) version. Old versions stay
 * in the ring until this has run, so the service keeps working throughout; run it again after a
 * crash. Answers how many secrets changed.
 */
export async function resealAll(brokers: BrokerStore, ring: Keyring, at: string): Promise<Result<{ connections: number; users: number }>> {
  let connections = 0;
  let users = 0;
  for (const c of await brokers.listConnections()) {
    if (!c.credentials) continue;
    const r = reseal(ring, c.id, c.credentials.sealed);
    if (!r.ok) return fail(errors.internalError(`connection ${c.id}: ${r.error.message}`));
    if (r.value.changed) {
      await brokers.updateConnection(c.id, { credentials: { sealed: r.value.sealed, keyVersion: ring.current.version } }, at);
      connections++;
    }
  }
  for (const u of await brokers.listUsers()) {
    const r = reseal(ring, snapTradeUserAad(u.agentId), u.secret.sealed);
    if (!r.ok) return fail(errors.internalError(`SnapTrade user of ${u.agentId}: ${r.error.message}`));
    if (r.value.changed) {
      await brokers.updateUserSecret(u.agentId, u.kind, { sealed: r.value.sealed, keyVersion: ring.current.version });
      users++;
    }
  }
  return ok({ connections, users });
}
