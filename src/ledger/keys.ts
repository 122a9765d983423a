// Agent signing keys: registering an Ed25519 public key, listing and revoking an agent's keys.
// Owns the rule for what counts as a public key: exactly 32 bytes in strict base64url that
// decode (RFC 8032, canonical encoding) to a curve point of prime order. Anything that looks
// like a private key or a PEM is refused with a message saying so; the service never holds one.
import { Point } from '@noble/ed25519';
import { monotonicFactory } from 'ulid';
import { b64urlDecode } from '../core/base64url.ts';
import type { Agent, SigningKey } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import type { Clock } from '../domain/clock.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { hasControlCharacter } from './ids.ts';

const nextUlid = monotonicFactory();

/** A signing key id: `aid_` and a ULID. */
export const signingKeyId = (): string => 'aid_' + nextUlid();

/** What a key id can look like (as signature.key_id's schema says); anything else is unknown. */
const KEY_ID = /^aid_[0-9A-Za-z]{1,64}$/;

export const LABEL_MAX_LENGTH = 200;

const PARAM = 'public_key';
const NEVER_PRIVATE = 'The service never accepts a private key: send only the raw 32-byte Ed25519 public key, base64url-encoded without padding.';

/** DER prefixes of the usual wrappers of Ed25519 keys (RFC 8410). */
const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420';
const SPKI_ED25519_PREFIX = '302a300506032b6570032100';

const invalid = (message: string) => fail<Uint8Array>(errors.invalidRequest(message, PARAM));

/** Why `text` is not an acceptable Ed25519 public key, or the key's 32 raw bytes. */
export function parsePublicKey(text: string): Result<Uint8Array> {
  if (/-----BEGIN|PRIVATE KEY/.test(text)) {
    return invalid(`public_key looks like a PEM document. ${NEVER_PRIVATE}`);
  }
  if (/^[0-9a-fA-F]+$/.test(text) && (text.length === 64 || text.length === 128)) {
    const hint = text.length === 128 ? ' 64 bytes is the size of an Ed25519 private key.' : '';
    return invalid(`public_key looks like hex; encode the 32 key bytes as base64url instead.${hint} ${NEVER_PRIVATE}`);
  }
  const raw = b64urlDecode(text);
  if (!raw) {
    return invalid('public_key must be base64url (RFC 4648 section 5: A-Z a-z 0-9 - _) without padding; standard base64 with +, / or = is not accepted');
  }
  const lengthProblem = sizeProblem(raw);
  if (lengthProblem) return invalid(lengthProblem);
  return checkPoint(raw);
}

function sizeProblem(raw: Uint8Array): string | null {
  if (raw.length === 32) return null;
  const hex = Buffer.from(raw).toString('hex');
  if (raw.length === 64) return `public_key is 64 bytes, the size of an Ed25519 private key (seed and public key). ${NEVER_PRIVATE}`;
  if (raw.length === 48) {
    const pkcs8 = hex.startsWith(PKCS8_ED25519_PREFIX) ? ' (and it starts like one)' : '';
    return `public_key is 48 bytes, the size of a PKCS#8-encoded Ed25519 private key${pkcs8}. ${NEVER_PRIVATE}`;
  }
  if (hex.startsWith(SPKI_ED25519_PREFIX) && raw.length === 44) {
    return 'public_key is a DER (SPKI) public key; send only its last 32 bytes, the raw key, base64url-encoded';
  }
  return `public_key must decode to exactly 32 bytes (a raw Ed25519 public key); it decodes to ${raw.length}`;
}

/** The key must be a canonical encoding of a point of prime order: small-order keys let anyone forge. */
function checkPoint(raw: Uint8Array): Result<Uint8Array> {
  let point: Point;
  try {
    point = Point.fromBytes(raw, false);
  } catch {
    return invalid('public_key is not a valid Ed25519 public key: its 32 bytes are not the canonical encoding of a curve point');
  }
  if (point.isSmallOrder()) {
    return invalid('public_key is a small-order point, under which signatures can be forged; it cannot be an Ed25519 public key');
  }
  if (!point.isTorsionFree()) {
    return invalid('public_key is not in the prime-order subgroup, so no Ed25519 private key produces it');
  }
  return ok(raw);
}

/** A label names the key for its owner: 1 to 200 characters on one line. */
export function labelProblem(label: string): string | null {
  const length = [...label].length;
  if (length < 1 || length > LABEL_MAX_LENGTH) return `label must be 1 to ${LABEL_MAX_LENGTH} characters`;
  if (hasControlCharacter(label)) return 'label cannot hold control characters (line breaks, tabs, NUL)';
  return null;
}

export class SigningKeys {
  constructor(private readonly store: LedgerStore, private readonly clock: Clock) {}

  /** Registers the key; the same public key sent again by the same agent returns the key already held. */
  async register(agent: Agent, input: { publicKey: string; label: string }): Promise<Result<{ key: SigningKey; created: boolean }>> {
    const raw = parsePublicKey(input.publicKey);
    if (!raw.ok) return raw;
    const badLabel = labelProblem(input.label);
    if (badLabel) return fail(errors.invalidRequest(badLabel, 'label'));
    const fresh: SigningKey = {
      id: signingKeyId(),
      agentId: agent.id,
      publicKey: input.publicKey,
      label: input.label,
      createdAt: this.clock.now().toISOString(),
      revokedAt: null,
    };
    const key = await this.store.createSigningKey(fresh);
    return ok({ key, created: key.id === fresh.id });
  }

  list(agent: Agent): Promise<SigningKey[]> {
    return this.store.listSigningKeys(agent.id);
  }

  /** Another agent's key id is answered exactly as an unknown one. */
  async find(agent: Agent, keyId: string): Promise<Result<SigningKey>> {
    const key = KEY_ID.test(keyId) ? await this.store.findSigningKey(agent.id, keyId) : null;
    return key ? ok(key) : fail(errors.notFound(`no signing key ${keyId} is registered for this agent`, 'key_id'));
  }

  /**
   * Revokes the key: it signs nothing new. Idempotent: a revoked key keeps its first revoked_at.
   * The store sets revoked_at no earlier than the agent's latest record, so every record the key
   * signed stays valid under canon_v1 section 5 ("not revoked before recorded_at").
   */
  async revoke(agent: Agent, keyId: string): Promise<Result<SigningKey>> {
    const found = await this.find(agent, keyId);
    if (!found.ok || found.value.revokedAt) return found;
    await this.store.revokeSigningKey(agent.id, keyId, this.clock.now().toISOString());
    return this.find(agent, keyId);
  }
}
