// Agent signing on the caller's side (docs/signing.md): an Ed25519 key pair made here (the private
// key never leaves the caller), the canon_v1 payload of a decision built locally with the shared
// core (src/core: the same code the service hashes with, so no assertion round trip is needed),
// and the signed request body. Signs with WebCrypto's Ed25519 where the platform has it (Node 20+,
// current browsers: native and much faster, bench/history/client.md), else with @noble/ed25519;
// Ed25519 signatures are deterministic, so both give the same bytes.
import * as ed from '@noble/ed25519';
import { b64urlDecode, b64urlEncode } from '../core/base64url.ts';
import { canonicalJson } from '../core/canon.ts';
import { decisionContent } from '../core/decision.ts';
import { isJsonObject, readJson, type JsonValue } from '../core/json.ts';
import { sha256Hex } from '../core/sha256.ts';
import { parseRfc3339 } from '../core/time.ts';
import { LedgerValidationError } from './errors.ts';
import type { DecisionFields, DecisionRequest } from './types.ts';

/** An Ed25519 key pair: the public half as the API takes it, the private 32-byte seed as bytes. */
export type SigningKeyPair = { publicKey: string; secretKey: Uint8Array };

/** What signing a decision needs: the agent's handle (it is in the payload), the registered key id and the private key. */
export type Signer = { agent: string; keyId: string; secretKey: Uint8Array };

export type DecisionPayload = {
  /** canon_v1 of the decision's content document: the exact string to sign (as UTF-8). */
  payload: string;
  /** Its SHA-256: the `verification.content_hash` the decision is recorded with. */
  contentHash: string;
  /** The request body's JSON text, from which the payload was built: send exactly these fields. */
  fields: string;
};

export async function generateSigningKey(): Promise<SigningKeyPair> {
  const secretKey = ed.utils.randomSecretKey();
  return { publicKey: b64urlEncode(await ed.getPublicKeyAsync(secretKey)), secretKey };
}

/** The public key (base64url) of a private key. */
export async function publicKeyOf(secretKey: Uint8Array): Promise<string> {
  return b64urlEncode(await ed.getPublicKeyAsync(secretKey));
}

/** A private key from its base64url text (32 bytes), as a key file holds it. */
export function secretKeyFromText(text: string): Uint8Array {
  const bytes = b64urlDecode(text.trim());
  if (bytes === null || bytes.length !== 32) throw new TypeError('an Ed25519 private key is 32 bytes, base64url without padding');
  return bytes;
}

export const secretKeyToText = (secretKey: Uint8Array): string => b64urlEncode(secretKey);

/** PKCS #8 wrapping of a raw Ed25519 private key (RFC 8410), the form WebCrypto imports. */
const PKCS8_ED25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/** WebCrypto keys by private key, imported once; null where the platform has no Ed25519. */
const webKeys = new WeakMap<Uint8Array, Promise<CryptoKey | null>>();

function webCryptoKey(secretKey: Uint8Array): Promise<CryptoKey | null> {
  let key = webKeys.get(secretKey);
  if (!key) {
    const der = new Uint8Array([...PKCS8_ED25519, ...secretKey]);
    key = Promise.resolve()
      .then(() => crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']))
      .catch(() => null);
    webKeys.set(secretKey, key);
  }
  return key;
}

/** The Ed25519 signature of `message` under `secretKey` (64 bytes). */
export async function signBytes(message: Uint8Array, secretKey: Uint8Array): Promise<Uint8Array> {
  const key = await webCryptoKey(secretKey);
  if (key) return new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key, message as Uint8Array<ArrayBuffer>));
  return ed.signAsync(message, secretKey);
}

/** A fresh random identifier (a nonce, an Idempotency-Key): 128 random bits as a UUID v4. */
export function randomId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The canon_v1 payload of a decision, built as the service builds it: the fields are serialised
 * once, read back losslessly (numbers keep their text, as the service reads them) and turned into
 * the content document by the core. Throws LedgerValidationError, naming the field, for what the
 * service would refuse. The occurred_at window (not in the future, at most 7 days old) is the
 * service's to judge, on its clock.
 */
export function decisionPayload(agent: string, fields: DecisionFields, nonce: string): DecisionPayload {
  if ('signature' in fields || 'nonce' in fields) {
    const param = 'signature' in fields ? 'signature' : 'nonce';
    throw invalid(param, `${param} is not a decision field: the signature is added when signing`);
  }
  const text = JSON.stringify(fields);
  const read = readJson(text);
  if (!read.ok) throw invalid(read.error.path, read.error.message);
  if (!isJsonObject(read.value)) throw invalid('body', 'a decision is a JSON object');
  const built = decisionContent({ agent, fields: read.value as { [key: string]: JsonValue }, nonce, now: judgeNow(fields.occurred_at) });
  if (!built.ok) throw invalid(built.error.param, built.error.message);
  const payload = canonicalJson(built.document);
  return { payload, contentHash: sha256Hex(payload), fields: text };
}

/** A clock at which occurred_at is always in the window, so only its form is checked here. */
function judgeNow(occurredAt: unknown): Date {
  const t = typeof occurredAt === 'string' ? parseRfc3339(occurredAt) : null;
  return new Date(t?.ok ? Math.max(Date.now(), t.epochMs + 1) : Date.now());
}

/**
 * The signed request body: the fields plus `signature: {key_id, nonce, signature}`, as JSON text
 * (the fields' text unchanged, so the service reads the same numbers the payload was built from).
 */
export async function signDecision(signer: Signer, fields: DecisionFields, nonce: string = randomId()): Promise<{ body: string; request: DecisionRequest; payload: DecisionPayload }> {
  const payload = decisionPayload(signer.agent, fields, nonce);
  const signature = b64urlEncode(await signBytes(new TextEncoder().encode(payload.payload), signer.secretKey));
  const envelope = { key_id: signer.keyId, nonce, signature };
  const body = payload.fields === '{}' ? `{"signature":${JSON.stringify(envelope)}}` : `${payload.fields.slice(0, -1)},"signature":${JSON.stringify(envelope)}}`;
  return { body, request: { ...fields, signature: envelope }, payload };
}

function invalid(param: string, message: string): LedgerValidationError {
  return new LedgerValidationError({ code: 'invalid_request', type: 'invalid_request_error', status: 0, message, param: param || undefined });
}
