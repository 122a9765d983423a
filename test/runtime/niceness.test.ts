// Thread priorities of the real service (`node bin/ledger.js serve`, a child process), read from
// /proc: with read threads, the read thread and V8's helper threads run at nice 19, the serving
// thread and libuv's pool (where the WAL's fsync runs) at the process's own; without read threads,
// every thread at the process's own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { outputOf } from '../support/child-output.ts';

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));
const linux = process.platform === 'linux';

type Thread = { tid: number; name: string; nice: number };

function threadsOf(pid: number): Thread[] {
  return readdirSync(`/proc/${pid}/task`).map(Number).sort((a, b) => a - b).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid, name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

/** Runs `ledger serve` until it listens, then hands its threads to `check` and stops it. */
async function withServer(env: Record<string, string>, check: (threads: Thread[], output: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-nice-'));
  const child = spawn(process.execPath, [LEDGER_BIN, 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, PORT: '0', HOST: '127.0.0.1', LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ledger.db')}`, LEDGER_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  let seen = '';
  child.stdout!.on('data', (c: Buffer) => (seen += c.toString()));
  try {
    for (let waited = 0; !/Server listening at/.test(seen); waited += 50) {
      if (child.exitCode !== null || waited > 30_000) throw new Error(`ledger serve did not listen:\n${(await output).stdout}${(await output).stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    check(threadsOf(child.pid!), seen);
  } finally {
    child.kill('SIGTERM');
    await output;
    rmSync(dir, { recursive: true, force: true });
  }
}

test('with a read thread: it and V8\'s helpers at nice 19; the serving thread and libuv\'s pool at 0', { skip: !linux && 'thread priorities are read from Linux /proc' }, async () => {
  await withServer({}, (threads, output) => {
    const [main, ...others] = threads;
    assert.equal(main!.nice, 0, 'the serving thread');
    const low = others.filter((t) => t.nice === 19);
    const named = threads.some((t) => t.name === 'V8Worker');
    if (named) {
      const helpers = threads.filter((t) => t.name === 'V8Worker');
      assert.ok(helpers.length > 0 && helpers.every((t) => t.nice === 19), `V8 helpers: ${JSON.stringify(helpers)}`);
      assert.ok(threads.filter((t) => t.name.startsWith('libuv')).every((t) => t.nice === 0), 'libuv\'s pool keeps the process\'s priority');
      assert.equal(low.length, helpers.length + 1, 'the helpers and the one read thread');
    } else {
      assert.equal(low.length, 4 + 1, `Node 20's four helpers and the read thread: ${JSON.stringify(threads)}`);
    }
    const lowered = /(\d+) V8 helper threads at low priority/.exec(output);
    assert.equal(Number(lowered?.[1]), low.length - 1, 'the start says how many helpers it lowered');
  });
});

test('without read threads: every thread keeps the process\'s priority', { skip: !linux && 'thread priorities are read from Linux /proc' }, async () => {
  await withServer({ LEDGER_READ_THREADS: '0' }, (threads) => {
    assert.deepEqual(threads.filter((t) => t.nice !== 0), []);
  });
});
