// Signing and verifying with the client against a real service on both stores: a decision signed
// with a payload built locally (no assertion round trip) is accepted as agent-signed and its proof
// verifies; the local payload is the assertion endpoint's byte for byte; a tampered proof, chain
// or export is rejected by verify, naming the check; what the service would refuse is refused
// locally with the same param, before anything is sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  LedgerClient, LedgerValidationError, decisionPayload, randomId, verifyDocument, verifyExportData, type Signer, type Verification,
} from '../../src/client/index.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { DECISION, faultyFetch, serve, type Served } from './support.ts';

const check = (v: Verification, name: string) => v.checks.find((c) => c.name === name);
const failed = (v: Verification) => v.checks.filter((c) => c.ok === false).map((c) => c.name);

await forEachStore('client signing and verify', (kind) => {
  let s: Served;
  let client: LedgerClient;
  let signer: Signer;
  let handle: string;
  let secret: string;

  before(async () => {
    s = await serve(kind);
    const agent = await s.agent();
    handle = agent.handle;
    secret = agent.secret;
    client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: agent.secret });
    const { key, pair } = await client.createSigningKey('client test key');
    signer = { agent: handle, keyId: key.id, secretKey: pair.secretKey };
  });
  after(() => closeTestApp(s, kind));

  test('a decision signed locally is recorded agent-signed, with the content hash computed locally', async () => {
    const fields = { ...DECISION, metadata: { model: 'm', features: { momentum: 0.410, big: '1e3' } }, occurred_at: new Date().toISOString() };
    const nonce = randomId();
    const local = decisionPayload(handle, fields, nonce);
    const f = faultyFetch(() => undefined);
    const signing = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, signer, fetch: f.fetch });
    const d = await signing.recordDecision(fields, { nonce });
    assert.equal(d.verification.agent_signed, true);
    assert.equal(d.verification.content_hash, local.contentHash);
    assert.deepEqual(f.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`), ['POST /v1/decisions'], 'no assertion round trip');
    const v = await client.verifyRecord(d.id);
    assert.equal(v.ok, true, JSON.stringify(v.checks.filter((c) => c.ok === false)));
    assert.equal(check(v, 'signature')?.ok, true);
    assert.match(check(v, 'signature')!.summary, /1 checked, 0 failed/);
  });

  test('the local payload is the assertion endpoint\'s, byte for byte', async () => {
    const fields = { symbol: 'BRK.B', action: 'REDUCE' as const, notional: 1e3, target_allocation_pct: '12.50', confidence: '0.0', thesis: 'é 😀 \u2028', metadata: { a: [1.0, -0, 2.5e-3], z: null }, occurred_at: new Date().toISOString() };
    const nonce = randomId();
    const assertion = await client.assertDecision({ ...fields, nonce });
    const local = decisionPayload(handle, fields, nonce);
    assert.equal(local.payload, assertion.payload);
    assert.equal(local.contentHash, assertion.content_hash);
  });

  test('a retried signed decision keeps its nonce and signature: one record', async () => {
    const f = faultyFetch((call, n) => (n === 1 ? 'drop-after' : undefined));
    const retrying = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, signer, fetch: f.fetch, sleep: async () => undefined });
    const before = (await client.listDecisions({ limit: 200 })).data.length;
    const d = await retrying.recordDecision(DECISION);
    assert.equal(d.replayed, true);
    assert.equal(f.calls[0]!.body, f.calls[1]!.body);
    assert.equal((await client.listDecisions({ limit: 200 })).data.length, before + 1);
  });

  test('what the service would refuse is refused locally, naming the field, before sending', async () => {
    const f = faultyFetch(() => undefined);
    const local = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, signer, fetch: f.fetch });
    for (const [fields, param] of [
      [{ ...DECISION, confidence: '2' }, 'confidence'],
      [{ ...DECISION, symbol: 'X'.repeat(21) }, 'symbol'],
      [{ ...DECISION, occurred_at: 'yesterday' }, 'occurred_at'],
      [{ ...DECISION, colour: 'red' }, 'colour'],
    ] as const) {
      const e = await local.recordDecision(fields as never).then(() => null, (x: unknown) => x);
      assert.ok(e instanceof LedgerValidationError, `${param}: ${String(e)}`);
      assert.equal(e.code, 'invalid_request');
      assert.equal(e.param, param);
    }
    assert.equal(f.calls.length, 0);
  });

  test('a tampered proof bundle is rejected, each alteration by its own check', async () => {
    const d = await client.recordDecision(DECISION, { signer });
    const bundle = await client.getProof(d.id);
    assert.equal((await verifyDocument(bundle)).ok, true);
    const copy = () => structuredClone(bundle) as typeof bundle & { record: { content: string; entry: Record<string, unknown>; chain_hash: string; document: Record<string, unknown> } };

    const content = copy();
    content.record.content = content.record.content.replace('"quantity":"10"', '"quantity":"100"');
    content.record.document = JSON.parse(content.record.content);
    const v1 = await verifyDocument(content);
    assert.equal(v1.ok, false);
    assert.ok(failed(v1).includes('content_bytes') && failed(v1).includes('content_hash'), failed(v1).join());

    const sig = copy();
    const env = sig.record.entry.signature as { signature: string };
    env.signature = (env.signature[0] === 'A' ? 'B' : 'A') + env.signature.slice(1);
    assert.ok(failed(await verifyDocument(sig)).includes('signature'));

    const chained = copy();
    chained.record.chain_hash = '0'.repeat(64);
    assert.ok(failed(await verifyDocument(chained)).includes('chain_hash'));

    const when = copy();
    when.record.entry.recorded_at = '2020-01-01T00:00:00.000Z';
    assert.ok(failed(await verifyDocument(when)).includes('chain_hash'));
  });

  test('an agent\'s chain verifies by export and by chain pages; a tampered export does not', async () => {
    for (const via of ['export', 'chain'] as const) {
      const v = await client.verifyAgent(handle, { via });
      assert.equal(v.ok, true, `${via}: ${JSON.stringify(v.checks.filter((c) => c.ok === false))}`);
      assert.ok(v.records >= 3);
      assert.equal(check(v, 'head')?.ok, true);
    }
    const text = await (await fetch(`${s.baseUrl}/export?agent=${handle}`)).text();
    assert.equal((await verifyExportData(text)).ok, true);
    const lines = text.split('\n');
    lines.splice(2, 1); // a record removed
    const v = await verifyExportData(lines.join('\n'));
    assert.equal(v.ok, false);
    assert.ok(failed(v).includes('prev_hash') && failed(v).includes('seq'), failed(v).join());
    const page = await client.getChain(handle);
    (page.records[0] as { content: string }).content = (page.records[0] as { content: string }).content.replace('AAPL', 'MSFT');
    assert.ok(failed(await verifyDocument(page)).includes('content_bytes'));
  });

  test('a document that is not one gives an unusable_input error', async () => {
    const e = await verifyDocument({ object: 'something' }).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerValidationError);
    assert.equal(e.code, 'unusable_input');
  });
});
