#!/usr/bin/env node
// The test command (npm test): first the layer rules (npm run lint:deps) and the build (the tests
// that run `bin/ledger.js` run dist/), then every test/**/*.test.ts file under node's test runner,
// with tsx for TypeScript. Pass file paths or substrings to run a subset: npm test -- core
// After node's own closing lines, a summary of its own (scripts/test-counts.mjs): product tests
// apart from the tooling self-tests in test/tooling/, and how many suites and tests were skipped.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';
import { groupOf } from './test-counts.mjs';

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
// The nightly mode (LEDGER_PROPERTY_RUNS, npm run test:nightly) runs as long as it needs.
// A file's bound (each file runs as one test): four minutes, for the longest files (the Python
// suite against two stores, the libfiu and crash-loop fault files) on a busy two-core machine.
const timeout = process.env.LEDGER_PROPERTY_RUNS ? [] : ['--test-timeout=240000'];
const major = Number(process.versions.node.split('.')[0]);
// Two test files at a time (node's default on 2 cores is one): most files wait on processes,
// sockets and fsync, so a second file fills the idle core. LEDGER_TEST_CONCURRENCY overrides it.
const concurrency = `--test-concurrency=${process.env.LEDGER_TEST_CONCURRENCY || 2}`;
// node's own reporter to stdout, as without --test-reporter (spec on a terminal, else TAP before
// Node 23; spec from 23), and the counting reporter to a file.
const shown = major >= 23 || process.stdout.isTTY ? 'spec' : 'tap';
const scratch = mkdtempSync(join(tmpdir(), 'ledger-test-counts-'));
const countsFile = join(scratch, 'counts.json');
const reporters = [`--test-reporter=${shown}`, '--test-reporter-destination=stdout',
  `--test-reporter=${fileURLToPath(new URL('./test-counts.mjs', import.meta.url))}`, `--test-reporter-destination=${countsFile}`];
const status = await runWatched(['--import', 'tsx', '--test', concurrency, ...timeout, ...reporters, ...files]);
printSummary(countsFile, files);
rmSync(scratch, { recursive: true, force: true });
process.exit(status);

/**
 * Runs node's test runner, its output passed through. From Node 22 the runner waits for ever on a
 * file that keeps something alive after its tests (a child's pipe, a timer), and holds back the
 * report of every file after it, so the output stops. (--test-force-exit would end such a file,
 * but it was seen to end a file before all its tests had run, silently.) No output for longer
 * than a file may run means such a hang: the run is stopped and fails, saying so.
 */
function runWatched(args) {
  const SILENCE_MS = 8 * 60_000;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['inherit', 'pipe', 'inherit'], detached: true });
    let last = Date.now();
    child.stdout.on('data', (chunk) => {
      last = Date.now();
      process.stdout.write(chunk);
    });
    // Its own process group, so that a hang is stopped with every process it started; an
    // interrupt of this command stops that group too.
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { try { process.kill(-child.pid, signal); } catch { /* gone */ } });
    const watch = setInterval(() => {
      if (Date.now() - last < SILENCE_MS || process.env.LEDGER_PROPERTY_RUNS) return;
      console.error(`npm test: no test output for ${SILENCE_MS / 60_000} minutes: a test file hangs after its tests (a handle left open), and node holds back the report of every file after it; the run is stopped`);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, 10_000);
    child.on('close', (code) => {
      clearInterval(watch);
      resolve(code ?? 1);
    });
  });
}

/** The closing summary: one line per group, the skipped suites and tests, and `N passed, N failed, N skipped` for the product. */
function printSummary(path, files) {
  const toolingFiles = files.filter((f) => groupOf(f) === 'tooling').length;
  let counts;
  try {
    counts = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    console.log(`# npm test: no counts from the test run (${files.length} files); see node's lines above`);
    return;
  }
  const { product: p, tooling: t } = counts;
  const skipped = (c) => c.skippedSuites + c.skippedTests;
  console.log(`# npm test: ${files.length - toolingFiles} product test files, ${toolingFiles} tooling files (test/tooling/)`);
  console.log(`# tooling self-tests (simulators, test and bench tooling; not counted below): ${t.passed} passed / ${t.failed + t.cancelled} failed / ${skipped(t)} skipped`);
  console.log(`# skipped product suites: ${p.skippedSuites}, skipped product tests: ${p.skippedTests}${p.todo ? `, todo: ${p.todo}` : ''} (each says why in a "# SKIP" line above)`);
  if (p.cancelled) console.log(`# cancelled product tests (a hook failed, or the run was cut short): ${p.cancelled}, counted as failed below`);
  console.log(`product tests: ${p.passed} passed, ${p.failed + p.cancelled} failed, ${skipped(p)} skipped`);
}
