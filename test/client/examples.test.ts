// The examples (examples/*.mjs, written on decision-ledger/client) run as a user runs them, as
// child processes against a real listening service on both stores, and do what they print.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { serve, type Served } from './support.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(example: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`examples/${example}`, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

await forEachStore('examples on the client', (kind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind);
  });
  after(() => closeTestApp(s, kind));

  test('sign-and-post, record-decision and verify-agent run and succeed', async () => {
    const { handle, secret } = await s.agent();
    const env = { LEDGER_BASE_URL: s.baseUrl, LEDGER_API_KEY: secret };
    const signed = await run('sign-and-post.mjs', [], env);
    assert.equal(signed.code, 0, signed.out);
    assert.match(signed.out, /4\. the locally built payload matches/);
    assert.match(signed.out, /agent_signed=true, chain_seq=1, content_hash matches=true/);
    assert.match(signed.out, /verifies: true/);
    const recordId = /recorded (dec_\w+)/.exec(signed.out)![1]!;

    const recorded = await run('record-decision.mjs', [], env);
    assert.equal(recorded.code, 0, recorded.out);
    assert.match(recorded.out, /replayed=true/);
    assert.match(recorded.out, /refused: 400 invalid_request, param confidence, request_id req_/);

    const verified = await run('verify-agent.mjs', [handle, recordId], { LEDGER_BASE_URL: s.baseUrl });
    assert.equal(verified.code, 0, verified.out);
    assert.match(verified.out, /chain: PASS \(2 records\)/);
    assert.match(verified.out, new RegExp(`proof of ${recordId}: PASS`));
  });
});
