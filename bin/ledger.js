#!/usr/bin/env node
// The `ledger` command: the compiled code in dist/ (built by `npm run build`, which `npm ci` and
// `npm start` run). In a checkout, a dist/ older than any source file in src/ would run other
// code than the code you read, so the command stops with one line saying to build; it never
// builds itself.
import { readdirSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);

function builtAt() {
  try {
    return statSync(new URL('dist/.tsbuildinfo', root)).mtimeMs;
  } catch {
    return -Infinity;
  }
}

function newestSource() {
  let files;
  try {
    files = readdirSync(new URL('src/', root), { recursive: true });
  } catch {
    return -Infinity; // an installed package: dist/ only
  }
  const sources = files.filter((file) => /\.(ts|js)$/.test(file));
  return Math.max(...sources.map((file) => statSync(new URL(`src/${file}`, root)).mtimeMs));
}

try {
  statSync(new URL('dist/cli/main.js', root));
  if (newestSource() > builtAt()) throw new Error('older than src/');
} catch (err) {
  const why = err.code === 'ENOENT' ? 'there is no dist/' : `dist/ is ${err.message}`;
  console.error(`ledger: ${why}: run \`npm run build\` first`);
  process.exit(1);
}
await import('../dist/cli/main.js');
