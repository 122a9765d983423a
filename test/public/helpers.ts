// Helpers for the public-read tests: public GETs through inject, error assertions, and agent-signed
// decisions made the way an agent makes them (its own Ed25519 key, the canonical payload it would
// get from the assertion endpoint), with the key registered straight in the store.
import assert from 'node:assert/strict';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { monotonicFactory } from 'ulid';
import { canonicalJson } from '../../src/core/canon.ts';
import { decisionContent } from '../../src/core/decision.ts';
import type { JsonValue } from '../../src/core/json.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { appendRecords } from '../../src/ledger/append.ts';
import { postDecision, type TestApp } from '../support/app.ts';

ed.hashes.sha512 = sha512;

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

export function get(t: TestApp, url: string, headers: Record<string, string> = {}): Promise<Response> {
  return t.app.inject({ method: 'GET', url, headers });
}

export function assertError(res: Response, status: number, code: string, param?: string): void {
  assert.equal(res.statusCode, status, res.body);
  const error = res.json().error;
  assert.equal(error.code, code, res.body);
  assert.match(error.request_id, /^req_/);
  if (param !== undefined) assert.equal(error.param, param, res.body);
}

export type Signer = { keyId: string; publicKey: string; secretKey: Uint8Array };

const nextKeyUlid = monotonicFactory();

/** A fresh Ed25519 key, registered for the agent directly in the store. */
export async function registerSigner(t: TestApp, agentId: string, revokedAt: string | null = null): Promise<Signer> {
  const secretKey = ed.utils.randomSecretKey();
  const publicKey = Buffer.from(ed.getPublicKey(secretKey)).toString('base64url');
  const key = await t.store.createSigningKey({
    id: `aid_${nextKeyUlid()}`, agentId, publicKey, label: 'test signer', createdAt: new Date().toISOString(), revokedAt,
  });
  return { keyId: key.id, publicKey, secretKey };
}

let nonces = 0;

/** Records an agent-signed decision through POST /v1/decisions; returns the 201 body. */
export async function postSigned(t: TestApp, agent: { handle: string; secret: string }, signer: Signer, fields: Record<string, string>) {
  const nonce = `nonce-${process.pid}-${Date.now()}-${++nonces}`;
  const made = decisionContent({ agent: agent.handle, fields: fields as { [k: string]: JsonValue }, nonce, now: new Date() });
  if (!made.ok) throw new Error(made.error.message);
  const payload = canonicalJson(made.document);
  const signature = Buffer.from(ed.sign(new TextEncoder().encode(payload), signer.secretKey)).toString('base64url');
  const res = await postDecision(t, agent.secret, { ...fields, signature: { key_id: signer.keyId, nonce, signature } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; verification: { agent_signed: boolean; chain_seq: number } };
}

/** Records `n` unsigned decisions; returns their ids in order. */
export async function postMany(t: TestApp, secret: string, n: number, fields: (i: number) => Record<string, unknown> = (i) => ({ symbol: 'AAPL', action: 'BUY', quantity: i + 1 })): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await postDecision(t, secret, fields(i));
    assert.equal(res.statusCode, 201, res.body);
    ids.push(res.json().id);
  }
  return ids;
}

/** Parses an NDJSON body into its lines' values. */
export function ndjson(body: string): Record<string, unknown>[] {
  return body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Chains a record of `type` with these content members (canon_v1 envelope added) through the
 * store's append path, past the API's checks: what broker sync, or an older writer, may have stored.
 */
export async function appendRecord(t: TestApp, agent: { handle: string; agentId: string }, type: 'decision' | 'execution', members: { symbol: string } & Record<string, JsonValue>): Promise<string> {
  const content = canonicalJson({ canon: 'canon_v1', type, agent: agent.handle, ...members });
  const [outcome] = await appendRecords(t.store, [{
    agentId: agent.agentId, agentHandle: agent.handle, type, symbol: members.symbol, content, contentHash: sha256Hex(content),
    signature: null, linkToken: null, idempotency: null,
  }], systemClock);
  if (outcome?.kind !== 'recorded') throw new Error(`${type} not recorded: ${outcome?.kind}`);
  return outcome.record.id;
}

/** An `execution` record with illustrative members, chained through the store's append path. */
export async function appendExecution(t: TestApp, agent: { handle: string; agentId: string }, symbol: string): Promise<string> {
  return appendRecord(t, agent, 'execution', { symbol, side: 'buy', quantity: '1', price: '100.5' });
}
