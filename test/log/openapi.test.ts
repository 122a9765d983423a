// The global log's endpoints are in /v1/openapi.json: each with an operationId, public
// (security []), its parameters, and the error body.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';

type Operation = { operationId?: string; security?: unknown[]; parameters?: { name: string; in: string }[]; responses: Record<string, { content?: Record<string, unknown> }> };

let t: TestApp;
let paths: Record<string, Record<string, Operation>>;
before(async () => {
  const store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  paths = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths;
});
after(async () => {
  await t.close();
  await t.store.close();
});

test('every log endpoint is documented, public, with an operationId', () => {
  const expected: [string, string, string[]][] = [
    ['/v1/log/checkpoint', 'getLogCheckpoint', []],
    ['/v1/log/tile/{path}', 'getLogTile', ['path']],
    ['/v1/log/proof/inclusion', 'getLogInclusionProof', ['record_id', 'tree_size']],
    ['/v1/log/proof/consistency', 'getLogConsistencyProof', ['from', 'to']],
  ];
  for (const [path, operationId, params] of expected) {
    const op = paths[path]?.get;
    assert.ok(op, path);
    assert.equal(op.operationId, operationId);
    assert.deepEqual(op.security, []);
    assert.deepEqual((op.parameters ?? []).map((p) => p.name).sort(), [...params].sort());
    assert.ok(op.responses['404'] || op.responses['400'], `${path} declares its errors`);
  }
  assert.ok(paths['/v1/log/checkpoint']!.get!.responses['200']!.content!['text/plain; charset=utf-8']);
  assert.ok(paths['/v1/log/tile/{path}']!.get!.responses['200']!.content!['application/octet-stream']);
});
