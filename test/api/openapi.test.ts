// GET /v1/openapi.json: OpenAPI 3.1, version 1.0.0, generated from the schemas that validate
// requests, covering the record path's routes, the admin API, the bearer scheme and the error body.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { DecisionRequest } from '../../src/api/schemas.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';

type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  parameters?: { in: string; name: string; required?: boolean; schema: Record<string, unknown> }[];
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
};
type Document = {
  openapi: string;
  info: { version: string; title: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }>; schemas: Record<string, Record<string, unknown>> };
};

const ERROR_REF = '#/components/schemas/ErrorBody';

await forEachStore('the OpenAPI document', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let doc: Document;

  before(async () => {
    store = await kind.open();
    t = await testApp(store);
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    doc = res.json();
  });
  after(() => closeTestApp(t, kind));

  const op = (path: string, method: string): Operation => {
    const found = doc.paths[path]?.[method];
    assert.ok(found, `${method.toUpperCase()} ${path} is described`);
    return found;
  };
  const errorRef = (o: Operation, status: string) => o.responses[status]?.content?.['application/json']?.schema.$ref;

  test('is OpenAPI 3.1, version 1.0.0, public', async () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(doc.info.version, '1.0.0');
    assert.ok(doc.info.title);
    const anonymous = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(anonymous.statusCode, 200, 'needs no key');
  });

  test('describes the record path and the admin API', () => {
    for (const [path, method] of [
      ['/v1/decisions', 'post'], ['/v1/decisions', 'get'], ['/v1/decisions/{id}', 'get'],
      ['/v1/decisions/{id}', 'patch'], ['/v1/decisions/{id}', 'put'], ['/v1/decisions/{id}', 'delete'],
      ['/v1/admin/agents', 'post'], ['/v1/admin/agents', 'get'], ['/v1/admin/agents/{handle}/status', 'post'],
      ['/v1/admin/agents/{handle}/api-keys', 'post'], ['/v1/admin/api-keys/{id}/revoke', 'post'],
    ]) op(path!, method!);
  });

  test('has the bearer scheme, and the authenticated routes use it', () => {
    const schemes = doc.components.securitySchemes;
    const bearerNames = Object.entries(schemes).filter(([, s]) => s.type === 'http' && s.scheme === 'bearer').map(([name]) => name);
    assert.ok(bearerNames.length >= 1);
    for (const [path, method] of [['/v1/decisions', 'post'], ['/v1/decisions', 'get'], ['/v1/decisions/{id}', 'get'], ['/v1/admin/agents', 'post']]) {
      const security = op(path!, method!).security ?? [];
      assert.ok(security.some((s) => Object.keys(s).some((k) => bearerNames.includes(k))), `${path} uses a bearer scheme`);
    }
    assert.notDeepEqual(op('/v1/decisions', 'post').security, op('/v1/admin/agents', 'post').security, 'agent keys and the admin token are different schemes');
  });

  test('has the 2.7 error body, referenced by the error responses', () => {
    const body = doc.components.schemas.ErrorBody as { required: string[]; properties: { error: { required: string[]; properties: Record<string, unknown> } } };
    assert.ok(body);
    assert.deepEqual(body.required, ['error']);
    assert.deepEqual([...body.properties.error.required].sort(), ['code', 'message', 'request_id', 'type']);
    assert.deepEqual(Object.keys(body.properties.error.properties).sort(), ['code', 'doc_url', 'message', 'param', 'request_id', 'type']);
    const post = op('/v1/decisions', 'post');
    for (const status of ['400', '401', '403', '409', '429']) assert.equal(errorRef(post, status), ERROR_REF, `POST /v1/decisions ${status}`);
    assert.equal(errorRef(op('/v1/decisions', 'get'), '400'), ERROR_REF);
    assert.equal(errorRef(op('/v1/decisions/{id}', 'patch'), '409'), ERROR_REF);
    assert.equal(errorRef(op('/v1/admin/agents', 'post'), '409'), ERROR_REF);
  });

  test('POST /v1/decisions: the request schema is the validating schema, additionalProperties false', () => {
    const post = op('/v1/decisions', 'post');
    assert.equal(post.requestBody?.required, true);
    const schema = post.requestBody!.content['application/json']!.schema;
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ['symbol', 'action']);
    assert.deepEqual(schema, JSON.parse(JSON.stringify(DecisionRequest)), 'generated from the schema that validates requests');
    const props = schema.properties as Record<string, Record<string, unknown>>;
    assert.equal(props.symbol!.maxLength, 20);
    assert.equal(props.currency!.minLength, 3);
    assert.equal(props.currency!.maxLength, 3);
    assert.equal(props.thesis!.maxLength, 8000);
    assert.equal(props.time_horizon!.maxLength, 120);
    assert.equal(props.signature!.additionalProperties, false);
    const key = post.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    assert.ok(key, 'the Idempotency-Key header is described');
    assert.equal(key.required, true);
    assert.equal(key.schema.minLength, 8);
    assert.equal(key.schema.maxLength, 255);
  });

  test('POST /v1/decisions: the 201 schema is 2.3', () => {
    const schema = op('/v1/decisions', 'post').responses['201']?.content?.['application/json']?.schema as { properties: Record<string, { properties?: Record<string, unknown> }>; required: string[] };
    assert.ok(schema);
    assert.deepEqual(Object.keys(schema.properties).sort(), ['id', 'immutable', 'link_token', 'object', 'proof_url', 'provenance', 'recorded_at', 'verification']);
    assert.deepEqual(Object.keys(schema.properties.verification!.properties!).sort(), ['agent_signed', 'algorithm', 'canonicalisation', 'chain_hash', 'chain_seq', 'content_hash']);
    assert.deepEqual([...schema.required].sort(), Object.keys(schema.properties).sort());
  });

  test('GET /v1/decisions: limit at most 200, default 50', () => {
    const limit = op('/v1/decisions', 'get').parameters?.find((p) => p.in === 'query' && p.name === 'limit');
    assert.ok(limit);
    assert.equal(limit.schema.maximum, 200);
    assert.equal(limit.schema.minimum, 1);
    assert.equal(limit.schema.default, 50);
    assert.equal(limit.schema.type, 'integer');
  });
});
