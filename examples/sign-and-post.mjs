#!/usr/bin/env node
// Records one agent-signed decision, end to end, with the client (decision-ledger/client):
//   1. generate an Ed25519 keypair (the private key never leaves this process);
//   2. register the public key (POST /v1/keys);
//   3. build the canon_v1 payload locally with the shared core, and (for this demonstration
//      only) ask the service for its payload (POST /v1/decisions/assertion);
//   4. check that the two match;
//   5. record the decision signed (POST /v1/decisions; the client signs the payload it built,
//      with one Idempotency-Key across retries) and verify its proof.
//
//   npm run build    # once, in a checkout: the client is compiled into dist/
//   LEDGER_BASE_URL=http://localhost:8080/v1 LEDGER_API_KEY=dl_live_... node examples/sign-and-post.mjs
//
// The API key needs the keys:write and decisions:write scopes.
import { LedgerClient, decisionPayload, randomId } from 'decision-ledger/client';

const baseUrl = process.env.LEDGER_BASE_URL ?? 'http://localhost:8080/v1';
const apiKey = process.env.LEDGER_API_KEY;
if (!apiKey) {
  console.error('set LEDGER_API_KEY to an agent API key (dl_live_...) with the keys:write and decisions:write scopes');
  process.exit(2);
}
const client = new LedgerClient({ baseUrl, apiKey });

// 1 and 2. A keypair, its public half registered. Keep pair.secretKey to yourself.
const { key, pair } = await client.createSigningKey('sign-and-post example');
console.log(`1. generated an Ed25519 keypair; public key ${pair.publicKey}`);
console.log(`2. registered it as ${key.id}`);

// 3. The decision, and its payload built here; the service's, to compare.
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
const nonce = `example-${randomId()}`;
const assertion = await client.assertDecision({ ...decision, nonce });
console.log(`3. payload to sign (content_hash ${assertion.content_hash}):\n   ${assertion.payload}`);

// 4. Built locally with the same core the service hashes with: the same bytes.
const local = decisionPayload(assertion.agent, decision, nonce);
if (local.payload !== assertion.payload) throw new Error(`the locally built payload differs from the service's:\n   ${local.payload}`);
console.log('4. the locally built payload matches');

// 5. Record it signed, then check the proof the service publishes for it.
const signer = { agent: assertion.agent, keyId: key.id, secretKey: pair.secretKey };
const recorded = await client.recordDecision(decision, { signer, nonce });
console.log(`5. recorded ${recorded.id} at ${recorded.recorded_at}: agent_signed=${recorded.verification.agent_signed}, ` +
  `chain_seq=${recorded.verification.chain_seq}, content_hash matches=${recorded.verification.content_hash === assertion.content_hash}`);
const proof = await client.verifyRecord(recorded.id);
console.log(`   proof: ${recorded.proof_url} verifies: ${proof.ok}`);
if (!recorded.verification.agent_signed || !proof.ok) process.exit(1);
