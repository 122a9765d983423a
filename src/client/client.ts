// LedgerClient: the interface's endpoints as typed methods over one Transport (http.ts), plus
// the two things an agent should never get wrong by hand: recording a decision exactly once
// (one Idempotency-Key, generated before the first attempt and kept across every retry) and
// signing it (the payload built locally with the shared core, no assertion round trip).
import { LedgerError, LedgerValidationError } from './errors.ts';
import { Transport, type Query, type TransportOptions } from './http.ts';
import { generateSigningKey, randomId, signDecision, type Signer, type SigningKeyPair } from './signing.ts';
import type {
  AgentProfile, Assertion, AssertionRequest, ChainPage, ChainQuery, Decision, DecisionFields, DecisionList, DecisionListItem,
  DecisionRequest, LedgerPage, LedgerQuery, Performance, PerformanceQuery, ProofBundle, SigningKey, SigningKeyList, Transparency,
} from './types.ts';
import { verifyDocument, verifyUrl, type Verification, type VerifyOptions } from './verify.ts';

export type ClientOptions = TransportOptions & {
  /** Signs every recordDecision: the agent's handle, the registered key id and the private key. */
  signer?: Signer | undefined;
};

export type RecordOptions = {
  /** Default: a fresh random key, generated once for this call and reused by each of its retries. */
  idempotencyKey?: string;
  /** Signs this decision (default: the client's signer, if any); `false` records it unsigned. */
  signer?: Signer | false;
  /**
   * For a signed decision: default the Idempotency-Key, so that retrying with the same key (even
   * from a later call) rebuilds the same signed bytes, which the service replays.
   */
  nonce?: string;
  signal?: AbortSignal;
};

export type Recorded = Decision & {
  /** True when the service replayed the answer to an earlier request with the same key. */
  replayed: boolean;
  /** The Idempotency-Key used, to retry later with the same one if needed. */
  idempotency_key: string;
};

const IDEMPOTENCY_KEY = /^[^\u0000-\u001F\u007F]{8,255}$/u;

export class LedgerClient {
  readonly transport: Transport;
  private readonly signer: Signer | undefined;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.signer = options.signer;
  }

  /** The API base this client talks to, ending in /v1. */
  get baseUrl(): string {
    return this.transport.api;
  }

  // -- Recording ---------------------------------------------------------------------------

  /**
   * POST /decisions, exactly once: one Idempotency-Key for every attempt, so a retry after a lost
   * answer replays the original instead of recording twice. Signed when a signer is given.
   */
  async recordDecision(decision: DecisionFields | DecisionRequest, options: RecordOptions = {}): Promise<Recorded> {
    const key = options.idempotencyKey ?? randomId();
    if (!IDEMPOTENCY_KEY.test(key)) throw invalid('Idempotency-Key', 'Idempotency-Key must be 8 to 255 characters without control characters');
    const signer = options.signer === false ? undefined : options.signer ?? this.signer;
    const body = signer && !('signature' in decision)
      ? (await signDecision(signer, decision, options.nonce ?? key)).body
      : JSON.stringify(decision);
    try {
      const answer = await this.transport.send<Decision>({
        method: 'POST', path: '/decisions', body, headers: { 'idempotency-key': key }, signal: options.signal,
      });
      return { ...answer.body, replayed: answer.headers.get('idempotent-replayed') === 'true', idempotency_key: key };
    } catch (e) {
      if (e instanceof LedgerError) e.idempotencyKey = key;
      throw e;
    }
  }

  /** POST /decisions/assertion: the payload the service would have you sign (signDecision builds it locally). */
  async assertDecision(request: AssertionRequest): Promise<Assertion> {
    return this.post<Assertion>('/decisions/assertion', request);
  }

  listDecisions(query: { limit?: number; cursor?: string } = {}): Promise<DecisionList> {
    return this.get<DecisionList>('/decisions', query);
  }

  getDecision(id: string): Promise<DecisionListItem> {
    return this.get<DecisionListItem>(`/decisions/${encodeURIComponent(id)}`);
  }

  // -- Signing keys --------------------------------------------------------------------------

  /** A new Ed25519 key pair, registered (POST /keys); the private key stays with the caller. */
  async createSigningKey(label: string): Promise<{ key: SigningKey; pair: SigningKeyPair }> {
    const pair = await generateSigningKey();
    return { key: await this.registerSigningKey(pair.publicKey, label), pair };
  }

  /** POST /keys: registering the same public key again answers the key already held. */
  registerSigningKey(publicKey: string, label: string): Promise<SigningKey> {
    return this.post<SigningKey>('/keys', { public_key: publicKey, label });
  }

  listSigningKeys(): Promise<SigningKeyList> {
    return this.get<SigningKeyList>('/keys');
  }

  revokeSigningKey(keyId: string): Promise<SigningKey> {
    return this.post<SigningKey>(`/keys/${encodeURIComponent(keyId)}/revoke`, {});
  }

  // -- Public reads --------------------------------------------------------------------------

  getAgent(handle: string): Promise<AgentProfile> {
    return this.get<AgentProfile>(`/agents/${encodeURIComponent(handle)}`, {}, false);
  }

  getChain(handle: string, query: ChainQuery = {}): Promise<ChainPage> {
    return this.get<ChainPage>(`/agents/${encodeURIComponent(handle)}/chain`, query, false);
  }

  getProof(recordId: string): Promise<ProofBundle> {
    return this.get<ProofBundle>(`/proof/${encodeURIComponent(recordId)}`, {}, false);
  }

  listLedger(query: LedgerQuery = {}): Promise<LedgerPage> {
    return this.get<LedgerPage>('/ledger', query, false);
  }

  getTransparency(): Promise<Transparency> {
    return this.get<Transparency>('/transparency', {}, false);
  }

  /** GET /agents/{handle}/performance. */
  getPerformance(handle: string, query: PerformanceQuery = {}): Promise<Performance> {
    return this.get<Performance>(`/agents/${encodeURIComponent(handle)}/performance`, query as Query, false);
  }

  /** GET {site_url}/llms.txt: the plain-text description of the service for agents. */
  async llmsTxt(): Promise<string> {
    const answer = await this.transport.send<string>({ method: 'GET', path: '/llms.txt', site: true, as: 'text', auth: false });
    return answer.body;
  }

  // -- Verification --------------------------------------------------------------------------

  /** Fetches a record's proof bundle and verifies it (hashes, signature, head, inclusion in the log). */
  async verifyRecord(recordId: string, options: Omit<VerifyOptions, 'baseUrl' | 'fetch'> = {}): Promise<Verification> {
    const bundle = await this.getProof(recordId);
    return verifyDocument(bundle, { ...options, baseUrl: this.baseUrl, fetch: this.transport.fetch });
  }

  /** Verifies an agent's whole chain: its export, streamed (or its chain pages, followed to the head). */
  verifyAgent(handle: string, options: Omit<VerifyOptions, 'baseUrl' | 'fetch'> & { via?: 'export' | 'chain' } = {}): Promise<Verification> {
    const url = options.via === 'chain'
      ? this.transport.url(`/agents/${encodeURIComponent(handle)}/chain`, { limit: 2000 })
      : this.transport.url('/export', { agent: handle });
    return verifyUrl(url, { ...options, baseUrl: this.baseUrl, fetch: this.transport.fetch });
  }

  // -- Plumbing ------------------------------------------------------------------------------

  private async get<T>(path: string, query: Query = {}, auth = true): Promise<T> {
    return (await this.transport.send<T>({ method: 'GET', path, query, auth })).body;
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    return (await this.transport.send<T>({ method: 'POST', path, body: JSON.stringify(body) })).body;
  }
}

function invalid(param: string, message: string): LedgerValidationError {
  return new LedgerValidationError({ code: 'invalid_request', type: 'invalid_request_error', status: 0, message, param });
}
