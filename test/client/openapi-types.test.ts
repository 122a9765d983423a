// The client's types cannot drift from the interface: src/client/openapi.json and
// openapi-types.ts must be exactly what scripts/client-types.mjs generates now from the app's
// own sources (the build regenerates them; this fails when a change to the API was not built).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DOCUMENT_FILE, TYPES_FILE, generate } from '../../scripts/client-types.mjs';

const fromSources = (path: string) => import(`../../src/${path}.ts`);

test('the committed OpenAPI document and types are what the app generates now', async () => {
  const { document, types } = (await generate(fromSources)) as { document: string; types: string };
  const stale = 'stale: run `npm run build` (it regenerates src/client/openapi.json and openapi-types.ts) and commit them';
  assert.ok(readFileSync(DOCUMENT_FILE, 'utf8') === document, `src/client/openapi.json is ${stale}`);
  assert.ok(readFileSync(TYPES_FILE, 'utf8') === types, `src/client/openapi-types.ts is ${stale}`);
  const doc = JSON.parse(document) as { paths: Record<string, unknown> };
  assert.ok(doc.paths['/v1/decisions'] && doc.paths['/v1/proof/{record_id}'], 'describes the record path and the proofs');
  assert.match(types, /recordDecision: \{/);
});
