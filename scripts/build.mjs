#!/usr/bin/env node
// The build (npm run build; also run by `npm ci`/`npm install` through `prepare`, by `npm start`,
// by the test command and by the smoke run): compiles src/ to dist/ with tsc in build mode, which
// does nothing but compare timestamps (about half a second) when dist/ is up to date.
// Without TypeScript (an install with --omit=dev) it keeps the dist/ that is there, if any.
// Then the public site's browser assets (scripts/build-site.mjs, esbuild: a tenth of a second).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Builds dist/; returns true when it is there and up to date, printing tsc's errors otherwise. */
export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    if (existsSync(new URL('../dist/cli/main.js', import.meta.url))) return true;
    console.error('build: TypeScript is not installed (an install without dev dependencies?) and there is no dist/: run `npm ci`');
    return false;
  }
  const run = spawnSync(process.execPath, [tsc, '--build', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) console.error('build: tsc failed (errors above); dist/ may be out of date');
  const site = spawnSync(process.execPath, ['scripts/build-site.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (site.status !== 0) console.error('build: the site\'s browser assets failed (errors above)');
  return run.status === 0 && site.status === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(build() ? 0 : 1);
