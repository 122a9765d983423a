// /v1/openapi.json fits the ecosystem: every operation has a unique operationId and declares its
// security ([] when public), and the standard linter (Redocly CLI, recommended rules) finds no error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';

type Operation = { operationId?: string; security?: unknown[] };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let store: LedgerStore;
let t: TestApp;
let text: string;

before(async () => {
  store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  text = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
});
after(async () => {
  await t.close();
  await store.close();
});

function operations(): [string, Operation][] {
  const paths = (JSON.parse(text) as { paths: Record<string, Record<string, Operation>> }).paths;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]));
}

test('every operation has a unique operationId and declares its security', () => {
  const ops = operations();
  assert.ok(ops.length >= 20, `found only ${ops.length} operations`);
  const ids = new Map<string, string>();
  for (const [name, op] of ops) {
    assert.ok(op.operationId, `${name} has no operationId`);
    assert.equal(ids.get(op.operationId), undefined, `${name} reuses the operationId of ${ids.get(op.operationId)}`);
    ids.set(op.operationId, name);
    assert.ok(Array.isArray(op.security), `${name} declares no security (public operations declare [])`);
  }
});

test('the public reads declare no credential; the others a bearer scheme', () => {
  for (const [name, op] of operations()) {
    const isPublic = /^GET \/v1\/(agents|proof|ledger|export|transparency)/.test(name);
    if (isPublic) assert.deepEqual(op.security, [], `${name} is public`);
  }
});

test('Redocly CLI (recommended rules) finds no error in the document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, text);
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    const run = spawnSync(process.execPath, [cli, 'lint', file, '--format', 'json', '--extends', 'recommended'], { encoding: 'utf8', timeout: 60_000 });
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`);
    assert.deepEqual(errors, []);
    assert.equal(report.totals.errors, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
