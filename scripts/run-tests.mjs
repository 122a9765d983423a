#!/usr/bin/env node
// The test command (npm test): every test/**/*.test.ts file under node's test runner, with
// tsx for TypeScript. Pass file paths or substrings to run a subset: npm test -- core
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

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
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=120000', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
