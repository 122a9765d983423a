// Helpers for the signing tests: an independent Ed25519 signer (@noble/ed25519, not the
// service's node:crypto path), requests through inject, error assertions, the authentication
// cases every key-guarded endpoint must pass, and verifying an agent's stored chain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { verifyChain, type ChainRecord, type VerifyResult } from '../../src/core/verify.ts';
import type { Scope } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, type TestApp } from '../support/app.ts';

ed.hashes.sha512 = sha512;

export type Keypair = { secretKey: Uint8Array; publicKey: string };
export type Agent = Awaited<ReturnType<TestApp['agent']>>;
type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

export const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

export function newKeypair(): Keypair {
  const secretKey = ed.utils.randomSecretKey();
  return { secretKey, publicKey: b64url(ed.getPublicKey(secretKey)) };
}

export function keypairFromSeed(seedHex: string): Keypair {
  const secretKey = new Uint8Array(Buffer.from(seedHex, 'hex'));
  return { secretKey, publicKey: b64url(ed.getPublicKey(secretKey)) };
}

/** Ed25519 over the payload's UTF-8 bytes, base64url: what an agent does. */
export function sign(payload: string, key: Keypair): string {
  return b64url(ed.sign(new TextEncoder().encode(payload), key.secretKey));
}

export function call(t: TestApp, method: 'GET' | 'POST', url: string, secret: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.app.inject({
    method,
    url,
    headers: {
      ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

export function assertError(res: Response, status: number, code: string, param?: string): { message: string; param?: string } {
  assert.equal(res.statusCode, status, res.body);
  const error = res.json().error;
  assert.equal(error.code, code, res.body);
  assert.match(error.request_id, /^req_/);
  assert.equal(typeof error.type, 'string');
  if (param !== undefined) assert.equal(error.param, param, res.body);
  return error;
}

export async function registerKey(t: TestApp, secret: string, publicKey: string, label = 'test key'): Promise<string> {
  const res = await call(t, 'POST', '/v1/keys', secret, { public_key: publicKey, label });
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  return res.json().id;
}

export async function assertion(t: TestApp, secret: string, body: unknown): Promise<{ payload: string; content_hash: string; agent: string }> {
  const res = await call(t, 'POST', '/v1/decisions/assertion', secret, body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

export function postSigned(t: TestApp, secret: string, fields: object, signature: object, key = idempotencyKey()): Promise<Response> {
  return call(t, 'POST', '/v1/decisions', secret, { ...fields, signature }, { 'idempotency-key': key });
}

/** Asserts, assertion-first, signs with `key` and records: the whole signing flow. */
export async function recordSigned(t: TestApp, agent: Agent, key: Keypair, keyId: string, fields: object, nonce: string): Promise<Response> {
  const asserted = await assertion(t, agent.secret, { ...fields, nonce });
  return postSigned(t, agent.secret, fields, { key_id: keyId, nonce, signature: sign(asserted.payload, key) });
}

export async function chainLength(store: LedgerStore, agentId: string): Promise<number> {
  return (await store.chainHead(agentId)).seq;
}

/** canon_v1 section 5 over the agent's stored chain, signatures checked with @noble/ed25519. */
export async function verifyStoredChain(store: LedgerStore, agent: Agent): Promise<VerifyResult> {
  const stored = (await store.listAgentRecords(agent.agentId, 'decision', { limit: 10_000 })).reverse();
  const records: ChainRecord[] = stored.map((r) => ({
    seq: r.chainSeq, id: r.id, type: r.type, recorded_at: r.recordedAt, content: JSON.parse(r.content),
    content_hash: r.contentHash, prev_hash: r.prevHash, chain_hash: r.chainHash, signature: r.signature,
  }));
  const keys = (await store.listSigningKeys(agent.agentId)).map((k) => ({ id: k.id, public_key: k.publicKey, revoked_at: k.revokedAt }));
  return verifyChain({
    agent: agent.handle,
    records,
    keys,
    verifySignature: (pub, message, sig) => ed.verify(Buffer.from(sig, 'base64url'), message, Buffer.from(pub, 'base64url')),
  });
}

/**
 * Interface section 5 on one endpoint: no key, bad key, revoked key, paused agent, missing scope.
 * `request(secret)` sends a request that would succeed for a fully scoped, active agent.
 */
export function authenticationCases(
  name: string,
  scope: Scope,
  getApp: () => TestApp,
  request: (t: TestApp, secret: string | null) => Promise<Response>,
): void {
  test(`${name}: no API key is 401 missing_api_key`, async () => {
    assertError(await request(getApp(), null), 401, 'missing_api_key');
  });
  test(`${name}: an unknown API key is 401 invalid_api_key`, async () => {
    assertError(await request(getApp(), 'dl_live_not-a-real-key-0000000000000000'), 401, 'invalid_api_key');
  });
  test(`${name}: a revoked API key is 401 invalid_api_key`, async () => {
    const t = getApp();
    const agent = await t.agent();
    const revoked = await t.operators.revokeKey(agent.keyId);
    assert.ok(revoked.ok);
    assertError(await request(t, agent.secret), 401, 'invalid_api_key');
  });
  test(`${name}: a paused agent is 403 agent_not_active`, async () => {
    const t = getApp();
    const agent = await t.agent();
    assert.ok((await t.operators.setStatus(agent.handle, 'paused')).ok);
    assertError(await request(t, agent.secret), 403, 'agent_not_active');
  });
  test(`${name}: a key without ${scope} is 403 insufficient_scope`, async () => {
    const t = getApp();
    const others = (['decisions:write', 'decisions:read', 'keys:write'] as Scope[]).filter((s) => s !== scope);
    const agent = await t.agent(undefined, { scopes: others });
    assertError(await request(t, agent.secret), 403, 'insufficient_scope');
  });
}
