// `ledger serve` with a master key that is not the one the database's secrets were sealed with, or
// a malformed one, stops at start: exit 2 and ONE line on stderr, no stack trace, no key material;
// the right key listens. (Every refusal, on both stores: test/brokers/master-key-start.test.ts.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { outputOf } from '../support/child-output.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'ledger-master-key-serve-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Run = { code: number | null; stdout: string; stderr: string; listening: boolean };

/** Runs `ledger serve` on a free port until it exits, or until it listens (then SIGTERM). */
async function serve(env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, ['bin/ledger.js', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ledger.db')}`, PORT: '0',
      LEDGER_SYNC_INTERVAL_S: '0', LEDGER_MARKET_DATA: 'none', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ended = outputOf(child);
  let seen = '';
  let listening = false;
  child.stdout.on('data', (c: Buffer) => {
    seen += c.toString();
    if (!listening && /Server listening at/.test(seen)) {
      listening = true;
      child.kill('SIGTERM');
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const { code, stdout, stderr } = await ended;
  clearTimeout(timer);
  return { code, stdout, stderr, listening };
}

function assertRefused(run: Run, line: RegExp): void {
  assert.equal(run.listening, false, `the service started: ${run.stdout}`);
  assert.equal(run.code, 2, `exit code ${run.code}: ${run.stderr}`);
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${run.stderr}`);
  assert.match(lines[0]!, line);
  assert.doesNotMatch(run.stderr + run.stdout, /^\s+at /m, 'no stack trace');
  for (const key of [K1, K2]) assert.ok(!(run.stderr + run.stdout).includes(key), 'no key material');
}

test('ledger serve: the key the database knows starts; another key or a malformed one exits 2 with one line', async () => {
  const first = await serve({ LEDGER_MASTER_KEY: K1 });
  assert.ok(first.listening, first.stderr);
  assert.equal(first.stderr, '');
  assertRefused(await serve({ LEDGER_MASTER_KEY: K2 }), /^ledger: configuration: LEDGER_MASTER_KEY: key version 1 is not the key this database's secrets were sealed with/);
  assertRefused(await serve({ LEDGER_MASTER_KEY: 'not-a-key' }), /^ledger: configuration: LEDGER_MASTER_KEY: master key entry 1: not base64 of exactly 32 bytes$/);
});
