#!/usr/bin/env node
// The test command (npm test): first the layer rules (npm run lint:deps) and the build (the tests
// that run `bin/ledger.js` run dist/), then every test/**/*.test.ts file under node's test runner,
// with tsx for TypeScript. Pass file paths or substrings to run a subset: npm test -- core
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'support' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test').sort().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// As `npm run lint:deps`: dependency-cruiser prints each violation.
const depcruise = fileURLToPath(new URL('../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));
const layers = spawnSync(process.execPath, [depcruise, 'src', 'bin'], { stdio: 'inherit' });
if (layers.status !== 0) {
  console.error('npm test: the layer rules (.dependency-cruiser.cjs) are broken, see above');
  process.exit(1);
}
if (!build()) process.exit(1);
// The nightly mode (LEDGER_PROPERTY_RUNS, npm run test:nightly) runs as long as it needs.
const timeout = process.env.LEDGER_PROPERTY_RUNS ? [] : ['--test-timeout=120000'];
// Two test files at a time (node's default on 2 cores is one): most files wait on processes,
// sockets and fsync, so a second file fills the idle core. LEDGER_TEST_CONCURRENCY overrides it.
const concurrency = `--test-concurrency=${process.env.LEDGER_TEST_CONCURRENCY || 2}`;
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', concurrency, ...timeout, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
