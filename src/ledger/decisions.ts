// The record path: a validated decision request becomes a durable, chained record, exactly
// once per idempotency key. Signature checks (when a `signature` is sent) live in signing.ts.
import { canonicalJson, type CanonValue } from '../core/canon.ts';
import type { SignatureEnvelope } from '../core/chain.ts';
import { decisionContent } from '../core/decision.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { Agent, StoredRecord } from '../domain/types.ts';
import type { IdempotentResult, LedgerStore, Page } from '../store/port.ts';
import type { Clock } from '../domain/clock.ts';
import { CommitQueue, type CommitObserver } from './commit-queue.ts';
import { errors, type LedgerError } from '../domain/errors.ts';
import { linkToken } from './ids.ts';
import { revokedKeyError, type SignatureCheck } from './signing.ts';

export type DecisionInput = {
  agent: Agent;
  /** The request body as read losslessly; already checked against the request schema. */
  body: { [key: string]: JsonValue };
  idempotencyKey: string;
};

export type DecisionOutcome =
  | { kind: 'created' | 'replayed'; status: number; body: string }
  | { kind: 'error'; error: LedgerError };

export type DecisionServiceOptions = {
  store: LedgerStore;
  clock: Clock;
  baseUrl: string;
  checkSignature: SignatureCheck;
  /** Told of every commit batch (the metrics). */
  observeCommits?: CommitObserver;
};

export class DecisionService {
  private readonly queue: CommitQueue;
  private readonly inFlight = new Set<string>();

  constructor(private readonly deps: DecisionServiceOptions) {
    this.queue = new CommitQueue(deps.store, deps.clock, undefined, deps.observeCommits ?? null);
  }

  /** Requests waiting to be committed, and batches committing. */
  get queueDepth(): { waiting: number; inFlight: number } {
    return this.queue.depth;
  }

  async record(input: DecisionInput): Promise<DecisionOutcome> {
    const flightKey = `${input.agent.id}\n${input.idempotencyKey}`;
    if (this.inFlight.has(flightKey)) return inFlightError();
    this.inFlight.add(flightKey);
    try {
      return await this.recordOnce(input);
    } finally {
      this.inFlight.delete(flightKey);
    }
  }

  /** The agent's decisions, newest first. */
  list(agent: Agent, page: Page): Promise<StoredRecord[]> {
    return this.deps.store.listAgentRecords(agent.id, 'decision', page);
  }

  /** One of the agent's decisions, or null (another agent's record is as good as absent). */
  async find(agent: Agent, id: string): Promise<StoredRecord | null> {
    const record = await this.deps.store.findRecord(id);
    return record && record.type === 'decision' && record.agentId === agent.id ? record : null;
  }

  /** Whether `key` already recorded a decision of `agent` (a request with it is a replay or a conflict). */
  async isRecordedKey(agent: Agent, key: string): Promise<boolean> {
    return (await this.deps.store.findIdempotent(agent.id, key)) !== null;
  }

  /** Waits for every accepted write to be committed (graceful shutdown). */
  drain(): Promise<void> {
    return this.queue.drain();
  }

  private async recordOnce(input: DecisionInput): Promise<DecisionOutcome> {
    const { agent, body, idempotencyKey } = input;
    const { signature, nonce, ...fields } = body;
    if (nonce !== undefined) return { kind: 'error', error: errors.invalidRequest('nonce belongs inside signature; it is not a decision field', 'nonce') };
    const signatureNonce = signature !== undefined ? nonceOf(signature) : undefined;
    const content = decisionContent({ agent: agent.handle, fields, nonce: signatureNonce, now: this.deps.clock.now() });
    if (!content.ok) return { kind: 'error', error: errors.invalidRequest(content.error.message, content.error.param) };
    const payload = canonicalJson(content.document);

    // "Same body" means the same decision: 1.5 and "1.50" record the same content, so they match.
    const fingerprint = sha256Hex(`POST /v1/decisions\n${payload}\n${signature === undefined ? '' : signatureCanon(signature)}`);

    let envelope: SignatureEnvelope | null = null;
    if (signature !== undefined) {
      const checked = await this.deps.checkSignature(agent, signature, payload);
      // A replay must not depend on the key still being valid, so a failed check first looks
      // for one. A write that passes finds an earlier use of its Idempotency-Key inside the
      // append, which checks that before the signing key and the nonce.
      if (!checked.ok) return (await this.replay(agent.id, idempotencyKey, fingerprint)) ?? { kind: 'error', error: checked.error };
      envelope = checked.envelope;
    }

    const outcome = await this.queue.append({
      agentId: agent.id,
      agentHandle: agent.handle,
      type: 'decision',
      symbol: symbolOf(content.document),
      content: payload,
      contentHash: sha256Hex(payload),
      signature: envelope,
      linkToken: linkToken(),
      idempotency: { key: idempotencyKey, fingerprint },
    });
    switch (outcome.kind) {
      case 'recorded':
        return { kind: 'created', status: 201, body: this.responseBody(outcome.record) };
      case 'agent_not_active':
        return { kind: 'error', error: errors.agentNotActive(`agent ${agent.handle} is not active`) };
      case 'nonce_used':
        return { kind: 'error', error: errors.invalidRequest('this nonce has already been used by a recorded decision', 'signature.nonce') };
      case 'key_revoked':
        return { kind: 'error', error: revokedKeyError(envelope?.key_id ?? '') };
      case 'idempotency_conflict':
        return (await this.replay(agent.id, idempotencyKey, fingerprint)) ?? inFlightError();
    }
  }

  private async replay(agentId: string, key: string, fingerprint: string): Promise<DecisionOutcome | null> {
    const earlier = await this.deps.store.findIdempotent(agentId, key);
    if (!earlier) return null;
    if (earlier.fingerprint !== fingerprint) {
      return { kind: 'error', error: errors.idempotencyKeyReused('this Idempotency-Key was already used with a different request body', 'Idempotency-Key') };
    }
    return { kind: 'replayed', status: earlier.status, body: this.replayBody(earlier) };
  }

  private responseBody(record: StoredRecord): string {
    return JSON.stringify(decisionResponse(record, this.deps.baseUrl));
  }

  /** Rows written before the append protocol kept the body; newer ones render it again from the record. */
  private replayBody(earlier: IdempotentResult): string {
    if (earlier.body !== null) return earlier.body;
    if (!earlier.record) throw new Error('an Idempotency-Key row points to no record');
    return this.responseBody(earlier.record);
  }
}

function inFlightError(): DecisionOutcome {
  return { kind: 'error', error: errors.idempotencyInFlight('a request with this Idempotency-Key is still being processed; retry shortly', 'Idempotency-Key') };
}

/** canon_v1 of the signature object's three members (a member that is not a string is null). */
function signatureCanon(v: JsonValue): string {
  const member = (name: string) => {
    const x = isJsonObject(v) ? v[name] : undefined;
    return typeof x === 'string' ? x : null;
  };
  return canonicalJson({ key_id: member('key_id'), nonce: member('nonce'), signature: member('signature') });
}

function nonceOf(signature: JsonValue): string | undefined {
  if (!isJsonObject(signature)) return undefined;
  const nonce = signature.nonce;
  return typeof nonce === 'string' ? nonce : undefined;
}

function symbolOf(document: CanonValue): string | null {
  const symbol = (document as { [k: string]: CanonValue }).symbol;
  return typeof symbol === 'string' ? symbol : null;
}

export function decisionResponse(record: StoredRecord, baseUrl: string) {
  return {
    id: record.id,
    object: 'decision' as const,
    immutable: true as const,
    recorded_at: record.recordedAt,
    provenance: 'SERVICE_RECORDED' as const,
    verification: {
      algorithm: 'sha256' as const,
      canonicalisation: 'canon_v1' as const,
      content_hash: record.contentHash,
      chain_hash: record.chainHash,
      chain_seq: record.chainSeq,
      agent_signed: record.signature !== null,
    },
    link_token: record.linkToken ?? '',
    proof_url: `${baseUrl}/proof/${record.id}`,
  };
}
