// `ledger witness` as a real process (bin/ledger.js, the compiled build) killed with SIGKILL again
// and again while a client sends it checkpoints: after every restart it never holds (nor cosigns) a
// size below one it answered 200 for, what it holds is the log's own history, and a fork signed by
// the same key is never cosigned. Also: the key file is created once with mode 0600, and the vkey
// printed at start stays the same across restarts; SIGTERM stops it with exit 0.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { b64Encode, parseCheckpointBody, parseCosignerVkey, parseNote, verifyCosignature } from '../../src/core/index.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { body, checkpointOf, history, LOG_VKEY, logList, proofOf, value } from './helpers.ts';

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));
const ORIGIN_HASH = 'bdc1ad3be5123bf026497b9767b37359fe3392f9749493f2b22c7b481ff13201'; // sha256('ledger.example/log')
const ROUNDS = Number(process.env.LEDGER_WITNESS_KILL_ROUNDS ?? 12);

type Running = { child: ChildProcess; url: string; vkey: string; output: () => string };

async function startWitnessProcess(logsFile: string, dataDir: string): Promise<Running> {
  const child = spawn(process.execPath, [LEDGER_BIN, 'witness', '--logs', logsFile, '--data', dataDir, '--port', '0', '--host', '127.0.0.1', '--name', 'witness.test/w1'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    const vkey = /witness vkey: (\S+)/.exec(out)?.[1];
    if (url && vkey) return { child, url, vkey, output: () => out };
    if (child.exitCode !== null) throw new Error(`ledger witness exited:\n${out}`);
    if (Date.now() > deadline) throw new Error(`ledger witness did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function kill9(r: Running): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const gone = new Promise((resolve) => r.child.once('exit', resolve));
  r.child.kill('SIGKILL');
  await gone;
}

async function tryPost(url: string, text: string): Promise<{ status: number; body: string } | null> {
  try {
    const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: text, signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return null; // killed mid-request
  }
}

describe('ledger witness killed with SIGKILL mid-request', () => {
  it(`never goes back below an answered size, nor off the log's history, over ${ROUNDS} kills`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-witness-kill-'));
    const logsFile = join(dir, 'logs.txt');
    writeFileSync(logsFile, logList(LOG_VKEY));
    const dataDir = join(dir, 'data');
    const leaves = Array.from({ length: 3000 }, (_, i) => new TextEncoder().encode(`leaf ${i}`));
    const a = history(leaves);
    const b = history([...leaves.slice(0, 2), new TextEncoder().encode('forked'), ...leaves.slice(3)]);
    let acked = 0; // the largest size the witness answered 200 for
    let vkeySeen: string | null = null;

    for (let round = 0; round <= ROUNDS; round++) {
      const w = await startWitnessProcess(logsFile, dataDir);
      try {
        if (vkeySeen === null) {
          vkeySeen = w.vkey;
          assert.equal(statSync(join(dataDir, 'witness-key.pem')).mode & 0o777, 0o600);
        }
        assert.equal(w.vkey, vkeySeen, 'the witness key is the same after a restart');
        const cosigner = value(parseCosignerVkey(w.vkey));

        // What survived: learnt from the 409 of `old 0`, and the monitoring GET.
        let known = 0;
        const probe = await tryPost(w.url, body(0, [], checkpointOf(a, 1)));
        assert.ok(probe);
        if (probe.status === 409) known = Number(probe.body.trim());
        else assert.equal(probe.status, 200, probe.body), (known = 1);
        assert.ok(known >= acked, `round ${round}: the witness is at ${known}, below the ${acked} it answered 200 for`);
        if (known > 0) {
          const served = await (await fetch(`${w.url}/${ORIGIN_HASH}/checkpoint`)).text();
          const cp = value(parseCheckpointBody(value(parseNote(served)).text));
          assert.equal(cp.size, known);
          assert.equal(b64Encode(cp.root), b64Encode(value(a.root(known))), 'the held checkpoint is on the log\'s history');
          assert.ok(verifyCosignature(served, cosigner, verifyRaw).ok);
        }
        acked = Math.max(acked, known);
        if (known >= 3) {
          // The fork (same key, same size and up) is never cosigned.
          const fork = await tryPost(w.url, body(known, proofOf(b, known, Math.min(known + 3, leaves.length)), checkpointOf(b, Math.min(known + 3, leaves.length))));
          assert.ok(fork && fork.status !== 200, `round ${round}: a forked checkpoint was cosigned`);
        }
        if (round === ROUNDS) {
          // The last run is stopped as an operator would: SIGTERM, exit 0.
          const exited = new Promise((resolve) => w.child.once('exit', (code, signal) => resolve(signal ?? code)));
          w.child.kill('SIGTERM');
          assert.equal(await exited, 0, w.output());
          break;
        }

        // Send checkpoints until killed at a random moment.
        let killed = false;
        const killer = new Promise<void>((resolve) => setTimeout(() => {
          killed = true;
          void kill9(w).then(resolve);
        }, 30 + Math.floor(Math.random() * 250)));
        while (!killed && known < leaves.length) {
          const next = Math.min(known + 1 + Math.floor(Math.random() * 5), leaves.length);
          const note = checkpointOf(a, next);
          const res = await tryPost(w.url, body(known, proofOf(a, known, next), note));
          if (!res) break;
          if (res.status === 200) {
            assert.ok(verifyCosignature(note + res.body, cosigner, verifyRaw).ok);
            known = next;
            acked = Math.max(acked, next);
          } else {
            assert.equal(res.status, 409, res.body);
            known = Number(res.body.trim());
          }
        }
        await killer;
      } finally {
        await kill9(w);
      }
    }
    assert.ok(acked > ROUNDS, `the client got cosignatures (${acked})`);
  });
});
