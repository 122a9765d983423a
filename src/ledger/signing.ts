// Agent signatures: an Ed25519 signature over the exact canon_v1 payload of the decision, under
// one of the agent's registered, unrevoked public keys. The service holds public halves only.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { b64urlDecode } from '../core/base64url.ts';
import { JsonNumber, type JsonValue } from '../core/json.ts';
import type { LedgerStore } from '../store/port.ts';
import type { SignatureCheck } from './decisions.ts';
import { errors } from './errors.ts';

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const keyObjects = new Map<string, KeyObject>();

/** A node:crypto key for a raw 32-byte Ed25519 public key (cached: keys never change). */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  const id = Buffer.from(raw).toString('base64url');
  let key = keyObjects.get(id);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
    if (keyObjects.size > 10_000) keyObjects.clear();
    keyObjects.set(id, key);
  }
  return key;
}

export function verifyEd25519(publicKeyB64url: string, message: Uint8Array, signatureB64url: string): boolean {
  const raw = b64urlDecode(publicKeyB64url);
  const sig = b64urlDecode(signatureB64url);
  if (!raw || raw.length !== 32 || !sig || sig.length !== 64) return false;
  try {
    return verify(null, message, ed25519PublicKey(raw), sig);
  } catch {
    return false;
  }
}

const field = (v: JsonValue, name: string): string | undefined => {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof JsonNumber) return undefined;
  const x = v[name];
  return typeof x === 'string' ? x : undefined;
};

export function signatureChecker(store: LedgerStore): SignatureCheck {
  return async (agent, signature, payload) => {
    const keyId = field(signature, 'key_id');
    const nonce = field(signature, 'nonce');
    const sig = field(signature, 'signature');
    if (!keyId || !nonce || !sig) return { ok: false, error: errors.invalidRequest('signature needs key_id, nonce and signature', 'signature') };
    const key = await store.findSigningKey(agent.id, keyId);
    if (!key) return { ok: false, error: errors.invalidRequest(`no signing key ${keyId} is registered for this agent`, 'signature.key_id') };
    if (key.revokedAt) return { ok: false, error: errors.invalidRequest(`signing key ${keyId} was revoked at ${key.revokedAt}`, 'signature.key_id') };
    if (!verifyEd25519(key.publicKey, Buffer.from(payload, 'utf8'), sig)) {
      return { ok: false, error: errors.invalidRequest('the signature does not verify over the canonical payload of this decision under this key', 'signature.signature') };
    }
    return { ok: true, envelope: { key_id: keyId, nonce, signature: sig } };
  };
}
