#!/usr/bin/env node
// The test command (npm test): first the layer rules (npm run lint:deps) and the build (the tests
// that run `bin/ledger.js` run dist/), then every test/**/*.test.ts file under node's test runner
// (scripts/test-run.mjs, with its closing summary). Pass file paths or substrings to run a subset:
// npm test -- core
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { runTestFiles } from './test-run.mjs';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'support' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// Arguments are parts of paths: a file runs when its path contains one of them (all files when
// none is given) and none of those written with a leading `!` (`npm test -- '!test/faults/'`).
const args = process.argv.slice(2);
const excluded = args.filter((a) => a.startsWith('!')).map((a) => a.slice(1));
const filters = args.filter((a) => !a.startsWith('!'));
const files = find('test').sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => !excluded.some((x) => f.includes(x)));
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
process.exit(await runTestFiles(files));
