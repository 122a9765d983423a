#!/usr/bin/env node
// The build (npm run build; also run by `npm ci`/`npm install` through `prepare`, by `npm start`,
// by the test command and by the smoke run): compiles src/ to dist/ with tsc in build mode, which
// does nothing but compare timestamps when dist/ is up to date (bench/history/tooling.md).
// Without TypeScript (an install with --omit=dev) it keeps the dist/ that is there, if any.
// After a compile that changed dist/, it regenerates the client's OpenAPI document and types
// (scripts/client-types.mjs) and compiles again if they changed, so they never drift from the app;
// under CI=true it only checks them, and fails when the committed files are stale.
// Last, the public site's browser assets (scripts/build-site.mjs, esbuild: quick).
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Builds dist/ and the site's assets; returns true when they are there and up to date, printing the errors otherwise. */
export function build() {
  return buildDist() && buildSiteAssets();
}

function buildSiteAssets() {
  const site = spawnSync(process.execPath, [fileURLToPath(new URL('./build-site.mjs', import.meta.url))], { cwd: ROOT, stdio: 'inherit' });
  if (site.status !== 0) console.error('build: the site\'s browser assets failed (errors above)');
  return site.status === 0;
}

function buildDist() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    if (existsSync(new URL('../dist/cli/main.js', import.meta.url))) return true;
    console.error('build: TypeScript is not installed (an install without dev dependencies?) and there is no dist/: run `npm ci`');
    return false;
  }
  const compile = () => {
    const run = spawnSync(process.execPath, [tsc, '--build', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
    if (run.status !== 0) console.error('build: tsc failed (errors above); dist/ may be out of date');
    return run.status === 0;
  };
  if (!compile()) return false;
  if (!clientTypesStale()) return true;
  // Under CI the committed files are checked, not rewritten: what is in git must be current.
  const check = process.env.CI === 'true' ? ['--check'] : [];
  const regenerated = spawnSync(process.execPath, [fileURLToPath(new URL('./client-types.mjs', import.meta.url)), ...check], { cwd: ROOT, encoding: 'utf8' });
  if (regenerated.status !== 0) {
    console.error(`build: the client's OpenAPI types: ${regenerated.stderr.trim() || 'generation failed'}`);
    return false;
  }
  if (regenerated.stdout.includes('regenerated') && !compile()) return false;
  writeFileSync(STAMP, new Date().toISOString() + '\n');
  return true;
}

const STAMP = fileURLToPath(new URL('../dist/.client-types-stamp', import.meta.url));
const BUILD_INFO = fileURLToPath(new URL('../dist/.tsbuildinfo', import.meta.url));

/** Whether dist/ was compiled after the client's types were last generated from it. */
function clientTypesStale() {
  if (!existsSync(STAMP)) return true;
  return statSync(BUILD_INFO).mtimeMs > statSync(STAMP).mtimeMs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(build() ? 0 : 1);
