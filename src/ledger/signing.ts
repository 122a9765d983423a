// Agent signatures: an Ed25519 signature over the exact canon_v1 payload of the decision, under
// one of the agent's registered, unrevoked public keys. Owns the assertion (the payload an agent
// signs, built exactly as the record path builds it) and the check on the record path. The
// service holds public halves only.
import { b64urlDecode } from '../core/base64url.ts';
import { canonicalJson } from '../core/canon.ts';
import type { SignatureEnvelope } from '../core/chain.ts';
import { decisionContent } from '../core/decision.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { Agent } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import type { Clock } from '../domain/clock.ts';
import { errors, fail, ok, type LedgerError, type Result } from '../domain/errors.ts';
import { hasControlCharacter } from './ids.ts';
import { verifyHere, type Ed25519Verifier } from './verifier-thread.ts';

const CACHE_LIMIT = 10_000;

/** Checks an agent-signed request and returns the signature envelope to chain. */
export type SignatureCheck = (agent: Agent, signature: JsonValue, payload: string) =>
  Promise<{ ok: true; envelope: SignatureEnvelope } | { ok: false; error: LedgerError }>;

/** Why a nonce cannot be used (it is an identifier: no control characters), or null. */
export function nonceProblem(nonce: string, param: string): string | null {
  return hasControlCharacter(nonce) ? `${param} cannot hold control characters` : null;
}

export type Assertion = { payload: string; contentHash: string };

/**
 * The payload an agent signs for a decision: canon_v1 of its content document, nonce included,
 * validated exactly as POST /v1/decisions validates it. Records nothing. A nonce a recorded
 * decision already used is refused here, before the caller spends a signature on it.
 */
export type AssertDecision = (agent: Agent, body: { [key: string]: JsonValue }) => Promise<Result<Assertion>>;

export function decisionAsserter(deps: { store: LedgerStore; clock: Clock }): AssertDecision {
  return (agent, body) => assertDecision(deps, agent, body);
}

async function assertDecision(
  deps: { store: LedgerStore; clock: Clock },
  agent: Agent,
  body: { [key: string]: JsonValue },
): Promise<Result<Assertion>> {
  const { nonce, ...fields } = body;
  if (typeof nonce !== 'string') return fail(errors.invalidRequest('nonce is required: a string unique to this decision', 'nonce'));
  const badNonce = nonceProblem(nonce, 'nonce');
  if (badNonce) return fail(errors.invalidRequest(badNonce, 'nonce'));
  if (!Object.hasOwn(fields, 'occurred_at')) return fail(errors.invalidRequest('occurred_at is required', 'occurred_at'));
  const content = decisionContent({ agent: agent.handle, fields, nonce, now: deps.clock.now() });
  if (!content.ok) return fail(errors.invalidRequest(content.error.message, content.error.param));
  if (await deps.store.isNonceUsed(agent.id, nonce)) {
    return fail(errors.invalidRequest('this nonce was already used by a recorded decision of this agent; choose a new one', 'nonce'));
  }
  const payload = canonicalJson(content.document);
  return ok({ payload, contentHash: sha256Hex(payload) });
}

const field = (v: JsonValue, name: string): string | undefined => {
  if (!isJsonObject(v)) return undefined;
  const x = v[name];
  return typeof x === 'string' ? x : undefined;
};

/** What the checker remembers of a key: its public half never changes, and revocation is final. */
type KnownKey = { publicKey: Uint8Array; revoked: boolean };

/**
 * The record path's signature check. A key's public half is cached after its first lookup; a
 * key cached as unrevoked may since have been revoked, which the store's append transaction
 * checks again (outcome `key_revoked`), so the signed path reads the key once per record.
 */
export function signatureChecker(store: LedgerStore, verify: Ed25519Verifier = verifyHere): SignatureCheck {
  const known = new Map<string, KnownKey>();

  const lookUp = async (agentId: string, keyId: string): Promise<KnownKey | null> => {
    const cacheKey = `${agentId}\n${keyId}`;
    const cached = known.get(cacheKey);
    if (cached) return cached;
    const key = await store.findSigningKey(agentId, keyId);
    if (!key) return null;
    const raw = b64urlDecode(key.publicKey);
    if (!raw || raw.length !== 32) throw new Error(`signing key ${keyId} holds an unreadable public key`);
    const entry = { publicKey: raw, revoked: key.revokedAt !== null };
    if (known.size > CACHE_LIMIT) known.clear();
    known.set(cacheKey, entry);
    return entry;
  };

  return async (agent, signature, payload) => {
    const keyId = field(signature, 'key_id');
    const nonce = field(signature, 'nonce');
    const sig = field(signature, 'signature');
    if (!keyId || !nonce || !sig) return { ok: false, error: errors.invalidRequest('signature needs key_id, nonce and signature', 'signature') };
    const badNonce = nonceProblem(nonce, 'signature.nonce');
    if (badNonce) return { ok: false, error: errors.invalidRequest(badNonce, 'signature.nonce') };
    const key = await lookUp(agent.id, keyId);
    if (!key) return { ok: false, error: errors.invalidRequest(`no signing key ${keyId} is registered for this agent`, 'signature.key_id') };
    if (key.revoked) return { ok: false, error: revokedKeyError(keyId) };
    const bytes = b64urlDecode(sig);
    if (!bytes || bytes.length !== 64) {
      return { ok: false, error: errors.invalidRequest('signature.signature must be the 64-byte Ed25519 signature, base64url without padding', 'signature.signature') };
    }
    if (!(await verify(key.publicKey, payload, bytes))) {
      return { ok: false, error: errors.invalidRequest('the signature does not verify over the canonical payload of this decision under this key', 'signature.signature') };
    }
    return { ok: true, envelope: { key_id: keyId, nonce, signature: sig } };
  };
}

export function revokedKeyError(keyId: string) {
  return errors.invalidRequest(`signing key ${keyId} is revoked and cannot sign new decisions`, 'signature.key_id');
}
