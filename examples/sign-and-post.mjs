#!/usr/bin/env node
// Records one agent-signed decision, end to end, the way an agent does it:
//   1. generate an Ed25519 keypair (the private key never leaves this process);
//   2. register the public key: POST /v1/keys;
//   3. ask for the payload to sign: POST /v1/decisions/assertion;
//   4. check it against the payload built locally (canon-payload.mjs), sign it, and
//   5. record the decision with its signature: POST /v1/decisions.
// Signs with @noble/ed25519, not with anything of the service's.
//
//   LEDGER_BASE_URL=http://localhost:8080/v1 LEDGER_API_KEY=dl_live_... node examples/sign-and-post.mjs
//
// The API key needs the keys:write and decisions:write scopes.
import * as ed from '@noble/ed25519';
import { randomUUID } from 'node:crypto';
import { decisionPayload } from './canon-payload.mjs';

const baseUrl = (process.env.LEDGER_BASE_URL ?? 'http://localhost:8080/v1').replace(/\/+$/, '');
const apiKey = process.env.LEDGER_API_KEY;
if (!apiKey) {
  console.error('set LEDGER_API_KEY to an agent API key (dl_live_...) with the keys:write and decisions:write scopes');
  process.exit(2);
}

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

async function call(method, path, body, headers = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${JSON.stringify(json.error)}`);
  return json;
}

// 1. A keypair. Keep secretKey to yourself; only publicKey is ever sent.
const secretKey = ed.utils.randomSecretKey();
const publicKey = await ed.getPublicKeyAsync(secretKey);
console.log(`1. generated an Ed25519 keypair; public key ${b64url(publicKey)}`);

// 2. Register the public key (raw 32 bytes, base64url).
const key = await call('POST', '/keys', { public_key: b64url(publicKey), label: 'sign-and-post example' });
console.log(`2. registered it as ${key.id}`);

// 3. The decision, with when it was decided and a fresh nonce, sent for assertion.
const decision = {
  symbol: 'AAPL',
  action: 'BUY',
  quantity: '10',
  confidence: '0.72',
  time_horizon: '3 months',
  thesis: 'Services revenue keeps compounding; the market underrates the installed base.',
  metadata: { model: 'example-model', features: { momentum: 0.41 } },
  occurred_at: new Date().toISOString(),
};
const nonce = `example-${randomUUID()}`;
const assertion = await call('POST', '/decisions/assertion', { ...decision, nonce });
console.log(`3. payload to sign (content_hash ${assertion.content_hash}):\n   ${assertion.payload}`);

// 4. The same bytes built locally must match; then sign them as UTF-8.
const local = decisionPayload({ agent: assertion.agent, fields: decision, nonce });
if (local !== assertion.payload) throw new Error(`the locally built payload differs from the service's:\n   ${local}`);
const signature = b64url(await ed.signAsync(new TextEncoder().encode(assertion.payload), secretKey));
console.log(`4. the locally built payload matches; signature ${signature}`);

// 5. Record it: the same fields, plus the signature (the nonce travels inside it).
const recorded = await call('POST', '/decisions', { ...decision, signature: { key_id: key.id, nonce, signature } },
  { 'idempotency-key': `example-${randomUUID()}` });
console.log(`5. recorded ${recorded.id} at ${recorded.recorded_at}: agent_signed=${recorded.verification.agent_signed}, ` +
  `chain_seq=${recorded.verification.chain_seq}, content_hash matches=${recorded.verification.content_hash === assertion.content_hash}`);
console.log(`   proof: ${recorded.proof_url}`);
if (!recorded.verification.agent_signed) process.exit(1);
