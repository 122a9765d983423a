// Runs test files under node's test runner as `npm test` does (scripts/run-tests.mjs, which first
// checks the layers and builds): tsx for TypeScript, two files at a time, each file's process
// watched by test-exit-watch.mjs, node's own report passed through, then a closing summary of its
// own (test-counts.mjs): product tests apart from the tooling self-tests in test/tooling/, the
// skipped suites and tests, and each file that did not exit after its tests.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { groupOf } from './test-counts.mjs';

const script = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url));

/** Runs `files` (paths); answers the exit status of the run (0: every file passed and exited). */
export async function runTestFiles(files) {
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
  const scratch = mkdtempSync(join(tmpdir(), 'ledger-test-run-'));
  const countsFile = join(scratch, 'counts.json');
  const lingerDir = join(scratch, 'lingering');
  const reporters = [`--test-reporter=${shown}`, '--test-reporter-destination=stdout',
    `--test-reporter=${script('test-counts.mjs')}`, `--test-reporter-destination=${countsFile}`];
  const preloads = ['--import', 'tsx', '--import', script('test-exit-watch.mjs')];
  let status = await runWatched([...preloads, '--test', concurrency, ...timeout, ...reporters, ...files], { LEDGER_TEST_LINGER_DIR: lingerDir });
  printSummary(countsFile, files);
  if (printLingering(lingerDir)) status ||= 1;
  rmSync(scratch, { recursive: true, force: true });
  return status;
}

/**
 * Runs node's test runner, its output passed through. A file whose tests have ended but whose
 * process does not exit is stopped by test-exit-watch.mjs after a grace, saying why. This watch
 * is the backstop: from Node 22 the runner waits for ever on a file that never ends (its tests
 * neither), holding back the report of every file after it, so the output stops. (--test-force-exit
 * would end such a file, but it was seen to end a file before all its tests had run, silently.)
 * No output for longer than a file may run means such a hang: the run is stopped and fails, saying so.
 */
function runWatched(args, env) {
  const SILENCE_MS = 8 * 60_000;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['inherit', 'pipe', 'inherit'], detached: true, env: { ...process.env, ...env } });
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

/** One line per file that test-exit-watch.mjs stopped; answers whether there was any. */
function printLingering(dir) {
  const path = join(dir, 'files');
  if (!existsSync(path)) return false;
  for (const file of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    console.log(`npm test: ${file} did not exit after its tests ended (stopped; what kept it alive is above, after "test-exit-watch: ${file}")`);
  }
  return true;
}
