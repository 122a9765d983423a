// Tooling self-test (test/tooling/, reported apart from the product tests): npm test's watch on a
// test file that does not exit (scripts/test-exit-watch.mjs, scripts/test-run.mjs). A file that
// leaves an interval running is stopped with a report naming the interval's creation site, and
// the run fails with one line naming the file; a teardown that never ends fails by its bound and is
// reported the same way; a file whose root after hook outlasts the grace, and then exits, is not stopped.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { outputOf, type ChildOutput } from '../support/child-output.ts';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const TEST_RUN = new URL('../../scripts/test-run.mjs', import.meta.url).href;
const GRACE_MS = 1_000;

const LINGERING = `import { test } from 'node:test';
function startHeartbeat() {
  return setInterval(() => undefined, 1_000);
}
test('passes, and leaves an interval running', () => {
  startHeartbeat();
});
`;

// Its root after hook takes longer than the grace (within its bound): the grace counts from the hook's end.
const SLOW_TEARDOWN = `import { after, test } from 'node:test';
let heartbeat;
test('passes, its interval cleared by the after hook', () => {
  heartbeat = setInterval(() => undefined, 1_000);
});
after(async () => {
  await new Promise((resolve) => setTimeout(resolve, ${3 * GRACE_MS}));
  clearInterval(heartbeat);
});
`;

// Its suite's teardown never ends, while an interval runs: the hook fails by its bound, then the watch reports.
const HUNG_TEARDOWN = `import { after, describe, test } from 'node:test';
describe('a suite whose teardown never ends', () => {
  test('passes, and leaves an interval running', () => {
    setInterval(() => undefined, 1_000);
  });
  after(() => new Promise(() => undefined));
});
`;
// A test, then an await at the top level (a service check), then a suite whose before hook outlasts
// the grace: the root's after hook runs after the first test, and the suite runs after it.
const LATE_SUITE = `import { before, describe, test } from 'node:test';
test('passes first', () => undefined);
await new Promise((resolve) => setTimeout(resolve, 100));
describe('a suite registered after an await', () => {
  before(() => new Promise((resolve) => setTimeout(resolve, ${3 * GRACE_MS})));
  test('passes after a slow fixture', () => undefined);
});
`;
const AFTER_HOOK_TIMEOUT_MS = 5_000;

/** Runs `files` as npm test runs them (without the layer check and the build), with a short grace. */
async function runAsNpmTest(files: string[]): Promise<ChildOutput & { all: string }> {
  // Without this process's NODE_TEST_CONTEXT: node's runner in the child would take itself for a nested run.
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  const child = spawn(process.execPath, ['--input-type=module', '-e',
    `const { runTestFiles } = await import(${JSON.stringify(TEST_RUN)}); process.exit(await runTestFiles(${JSON.stringify(files)}));`], {
    cwd: PROJECT,
    env: { ...env, LEDGER_TEST_EXIT_GRACE_MS: String(GRACE_MS), LEDGER_TEST_AFTER_HOOK_TIMEOUT_MS: String(AFTER_HOOK_TIMEOUT_MS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = await outputOf(child);
  return { ...output, all: output.stdout + output.stderr };
}

describe('npm test on a file that does not exit after its tests', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-exit-watch-'));
    writeFileSync(join(dir, 'lingering.test.mjs'), LINGERING);
    writeFileSync(join(dir, 'slow-teardown.test.mjs'), SLOW_TEARDOWN);
    writeFileSync(join(dir, 'hung-teardown.test.mjs'), HUNG_TEARDOWN);
    writeFileSync(join(dir, 'late-suite.test.mjs'), LATE_SUITE);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the interval left running is named with its creation site, and the run fails with one line naming the file', async () => {
    const run = await runAsNpmTest([join(dir, 'lingering.test.mjs')]);
    assert.notEqual(run.code, 0, run.all);
    assert.match(run.all, /setInterval \(1000 ms\), created\n\s*(#\s*)?at startHeartbeat \(file:\/\/\S*lingering\.test\.mjs:3:10\)/, run.all);
    const verdicts = run.stdout.split('\n').filter((line) => line.startsWith('npm test: ') && line.includes('did not exit'));
    assert.equal(verdicts.length, 1, run.all);
    assert.match(verdicts[0]!, /lingering\.test\.mjs did not exit after its tests ended/);
  });

  test('an after hook that never ends fails by its bound, and what is left is reported', async () => {
    const run = await runAsNpmTest([join(dir, 'hung-teardown.test.mjs')]);
    assert.notEqual(run.code, 0, run.all);
    assert.match(run.all, new RegExp(`this after hook did not end within ${AFTER_HOOK_TIMEOUT_MS} ms`), run.all);
    assert.match(run.all, /setInterval \(1000 ms\), created\n\s*(#\s*)?at TestContext\.<anonymous> \(file:\/\/\S*hung-teardown\.test\.mjs:4:5\)/, run.all);
    assert.match(run.stdout, /^npm test: \S*hung-teardown\.test\.mjs did not exit after its tests ended/m, run.all);
  });

  test('a suite registered after an await, its before hook outlasting the grace, is not stopped', async () => {
    const run = await runAsNpmTest([join(dir, 'late-suite.test.mjs')]);
    assert.equal(run.code, 0, run.all);
    assert.match(run.stdout, /^product tests: 2 passed, 0 failed/m, run.all);
    assert.doesNotMatch(run.all, /did not exit|test-exit-watch:/);
  });

  test('a file whose after hook outlasts the grace and then exits is not stopped', async () => {
    const run = await runAsNpmTest([join(dir, 'slow-teardown.test.mjs')]);
    assert.equal(run.code, 0, run.all);
    assert.match(run.stdout, /^product tests: 1 passed, 0 failed/m, run.all);
    assert.doesNotMatch(run.all, /did not exit|test-exit-watch:/);
  });
});
