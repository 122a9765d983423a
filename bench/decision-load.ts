// The write benchmark's workload: one realistic decision body, agents (API key + Ed25519
// signing key each) created through the ledger's own use cases, and the autocannon request
// generators that spread uniquely keyed writes across the agents. Signed bodies are signed
// before the clock starts, so the benchmark measures the service verifying, not us signing.
import type { Request } from 'autocannon';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { ulid } from 'ulid';
import { canonicalJson } from '../src/core/canon.ts';
import { decisionContent } from '../src/core/decision.ts';
import { readJson, type JsonValue } from '../src/core/json.ts';
import { systemClock } from '../src/domain/clock.ts';
import { Operators } from '../src/ledger/operators.ts';
import { openStore } from '../src/store/open.ts';

const THESIS =
  'Services revenue keeps compounding at a double-digit rate while hardware margins held up through the ' +
  'last two cycles; the installed base passed two billion active devices and monetisation per device is ' +
  'still rising. Buybacks retire roughly three percent of the float a year. The market prices the stock ' +
  'as if the upgrade cycle were over, but carrier data shows replacement intervals shortening again. ' +
  'Risks: regulatory pressure on the app store take rate, China demand, and a richer multiple than the ' +
  'five-year median. Sizing is moderate; the position is reviewed after the next earnings report.';

/** The body every write target receives (signed writes add `signature`). */
export const DECISION = {
  symbol: 'AAPL',
  action: 'BUY',
  asset_class: 'US_EQUITY',
  quantity: '25.5',
  currency: 'USD',
  confidence: 0.72,
  time_horizon: '3 months',
  thesis: THESIS,
  metadata: { model: 'bench-agent-v1', price_seen: 187.42, lookback_days: 90, signals: { momentum: 0.31, value: -0.12 } },
  occurred_at: new Date(Date.now() - 60_000).toISOString(),
};
const DECISION_TEXT = JSON.stringify(DECISION);
const DECISION_BYTES = Buffer.from(DECISION_TEXT);

export type BenchAgent = { handle: string; secret: string; keyId: string; privateKey: KeyObject };

/** Creates `count` active agents, each with an API key and a registered Ed25519 public key. */
export async function createAgents(databaseUrl: string, count: number): Promise<BenchAgent[]> {
  const store = openStore(databaseUrl);
  try {
    await store.migrate();
    const operators = new Operators(store, systemClock);
    const agents: BenchAgent[] = [];
    for (let i = 0; i < count; i++) {
      const created = await operators.createAgent({ handle: `bench-${i}` });
      if (!created.ok) throw new Error(`cannot create agent bench-${i}: ${created.error.message}`);
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const raw = publicKey.export({ format: 'jwk' }).x!; // base64url of the raw 32 bytes
      const key = await store.createSigningKey({
        id: 'aid_' + ulid(), agentId: created.value.agent.id, publicKey: raw, label: 'bench',
        createdAt: new Date().toISOString(), revokedAt: null,
      });
      agents.push({ handle: created.value.agent.handle, secret: created.value.apiKey.secret, keyId: key.id, privateKey });
    }
    return agents;
  } finally {
    await store.close();
  }
}

/** Record ids from 201 answers: the writes the service acknowledged. */
export type Acknowledged = Set<string>;
const RECORD_ID = /"id":"(dec_[0-9A-Za-z]+)"/;

function collect(acked: Acknowledged | null): Request['onResponse'] {
  if (!acked) return undefined;
  return (status, body) => {
    if (status !== 201) return;
    const id = RECORD_ID.exec(body)?.[1];
    if (id) acked.add(id);
  };
}

const headers = (secret: string, idempotencyKey: string) => ({
  'content-type': 'application/json',
  authorization: `Bearer ${secret}`,
  'idempotency-key': idempotencyKey,
});

/**
 * A factory of autocannon request lists (one per run: warm-up, measurement) that share one
 * counter, so Idempotency-Keys never repeat; request i sends `nth(i)`.
 */
function decisionWrites(prefix: string, nth: (i: number) => { secret: string; body: Buffer }, acked: Acknowledged | null): () => Request[] {
  const tag = `${prefix}${process.pid}-${Date.now().toString(36)}`;
  let n = 0;
  return () => [{
    method: 'POST',
    path: '/v1/decisions',
    setupRequest: (request) => {
      const i = n++;
      const { secret, body } = nth(i);
      request.headers = headers(secret, `${tag}-${i}`);
      request.body = body;
      return request;
    },
    onResponse: collect(acked),
  }];
}

/** Unsigned writes: the same body each time, agents in rotation, a fresh Idempotency-Key per request. */
export function unsignedWrites(agents: { secret: string }[], acked: Acknowledged | null): () => Request[] {
  return decisionWrites('w', (i) => ({ secret: agents[i % agents.length]!.secret, body: DECISION_BYTES }), acked);
}

export type SignedBody = { agent: BenchAgent; body: Buffer };

/** `count` signed decision bodies: each one the decision plus a signature over its canon_v1 payload with a unique nonce. */
export function signBodies(agents: BenchAgent[], count: number): SignedBody[] {
  const read = readJson(DECISION_TEXT);
  if (!read.ok) throw new Error(`the benchmark decision is not valid JSON: ${read.error.message}`);
  const fields = read.value as { [key: string]: JsonValue };
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const now = new Date();
  const bodies: SignedBody[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const agent = agents[i % agents.length]!;
    const nonce = `n-${tag}-${i}`;
    const content = decisionContent({ agent: agent.handle, fields, nonce, now });
    if (!content.ok) throw new Error(`the benchmark decision is refused: ${content.error.message}`);
    const payload = canonicalJson(content.document);
    const signature = sign(null, Buffer.from(payload, 'utf8'), agent.privateKey).toString('base64url');
    const text = `${DECISION_TEXT.slice(0, -1)},"signature":${JSON.stringify({ key_id: agent.keyId, nonce, signature })}}`;
    bodies[i] = { agent, body: Buffer.from(text) };
  }
  return bodies;
}

/** Signed writes, each pre-signed body sent once (a body sent twice would reuse its nonce). */
export function signedWrites(bodies: SignedBody[], acked: Acknowledged | null): () => Request[] {
  return decisionWrites('s', (i) => {
    const signed = bodies[i % bodies.length]!;
    return { secret: signed.agent.secret, body: signed.body };
  }, acked);
}
