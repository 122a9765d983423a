// The Python package (python/: decision_ledger) is tested by pytest (python/tests), against the
// vectors and against real services; this file runs that suite as part of `npm test`. Without
// Debian's python3-pytest it skips with a visible message, except under CI=true, where it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { outputOf } from '../support/child-output.ts';

const PYTHON = process.env.LEDGER_TEST_PYTHON ?? '/usr/bin/python3';
const CI = process.env.CI === 'true';

function pytestProblem(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import pytest'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON}: ${probe.error.message}`;
  return probe.status === 0 ? null : `${PYTHON} has no pytest (apt-get install python3-pytest): ${probe.stderr.trim().split('\n').pop()}`;
}

test('python/tests: the Python client and verifier (pytest)', { timeout: 900_000 }, async (t) => {
  const problem = pytestProblem();
  if (problem !== null) {
    if (CI) assert.fail(`CI=true: ${problem}`);
    t.skip(problem);
    return;
  }
  const child = spawn(PYTHON, ['-m', 'pytest', 'python/tests', '-q', '-p', 'no:cacheprovider'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  const { code, stdout, stderr } = await outputOf(child);
  const summary = stdout.trim().split('\n').pop() ?? ''; // pytest's last line
  t.diagnostic(summary);
  assert.equal(code, 0, `pytest failed:\n${stdout}${stderr}`);
  if (CI) assert.doesNotMatch(summary, /skipped/, 'CI=true: no Python test may skip');
});
