// /v1/openapi.json documents what pricing publishes: the proof's price_observation (its schema),
// the export's price_observation lines and header count, and provider_error (502) in the error set.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';

type Schema = { properties?: Record<string, Schema>; anyOf?: Schema[]; description?: string; required?: string[] } & Record<string, unknown>;
let t: TestApp;
let doc: { paths: Record<string, Record<string, { description?: string; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>; components: { schemas: Record<string, Schema> } };

before(async () => {
  const store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
});
after(async () => {
  await t.close();
  await t.store.close();
});

test('the proof documents price_observation: the observation or null, every member described', () => {
  const proof = doc.paths['/v1/proof/{record_id}']!.get!.responses['200']!.content!['application/json']!.schema;
  const member = proof.properties!.price_observation!;
  assert.match(String(member.description), /price at receipt/);
  const observation = member.anyOf!.find((s) => s.type === 'object')!;
  assert.deepEqual(Object.keys(observation.properties!).sort(), [
    'age_ms', 'asked_at', 'feed', 'observed_at', 'price', 'provider_time', 'reason', 'record_id', 'source', 'stale', 'status', 'symbol', 'synthetic',
  ]);
  assert.deepEqual([...observation.required!].sort(), Object.keys(observation.properties!).sort(), 'every member is always present (null where it does not apply)');
  assert.match(String(observation.properties!.stale!.description), /15 minutes/);
  assert.match(String(observation.properties!.reason!.description), /not_configured: /);
  assert.match(String(observation.properties!.source!.description), /`none`/);
  assert.ok(observation.properties!.observed_at!.anyOf!.some((s) => s.type === 'null'), 'observed_at is null for not_configured');
  assert.ok(member.anyOf!.some((s) => s.type === 'null'));
});

test('the export says which lines carry price_observation and what the header counts', () => {
  const description = String(doc.paths['/v1/export']!.get!.description);
  assert.match(description, /price_observation/);
  assert.match(description, /price_observations/);
  assert.match(description, /not hashed/);
});

test('provider_error (502) is in the documented error set', () => {
  const code = doc.components.schemas.ErrorBody!.properties!.error!.properties!.code!;
  assert.match(String(code.description), /provider_error \(502\)/);
  assert.match(String(code.description), /service_unavailable \(503\)/);
});
