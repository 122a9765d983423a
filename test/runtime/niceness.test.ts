// Thread priorities of the real service (`node bin/ledger.js serve`, a child process), read from
// /proc: with read threads, the read thread and V8's helper threads run at nice 19, the serving
// thread and libuv's pool (where the WAL's fsync runs) at the process's own; without read threads,
// every thread at the process's own.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { v8HelpersAmong, type ThreadName } from '../../src/runtime/niceness.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import { freePort } from '../support/ports.ts';

const linux = process.platform === 'linux';

type Thread = ThreadName & { nice: number };

function threadsOf(pid: number): Thread[] {
  return readdirSync(`/proc/${pid}/task`).map(Number).sort((a, b) => a - b).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid, name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) };
  });
}

/** Waits until `settled` holds of the server's threads and output (at most 60 s), so that a start still under way is not taken for its end. */
async function settledThreads(node: LedgerNode, settled: (threads: Thread[], output: string) => boolean): Promise<Thread[]> {
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const threads = threadsOf(node.pid!);
    if (settled(threads, node.output) || Date.now() - started > 60_000) return threads;
  }
}

/**
 * Runs `ledger serve` until it answers and `settled` holds, then hands its threads and its output
 * to `check` and stops it. The read threads start after the server listens (server.ts).
 */
async function withServer(env: Record<string, string>, settled: (threads: Thread[], output: string) => boolean, check: (threads: Thread[], output: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-nice-'));
  const node = new LedgerNode('nice', await freePort(), { LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ledger.db')}`, LEDGER_LOG_LEVEL: 'info', ...env }, dir);
  try {
    await node.start();
    check(await settledThreads(node, settled), node.output);
  } finally {
    await node.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('with a read thread: it and V8\'s helpers at nice 19; the serving thread and libuv\'s pool at 0', { skip: !linux && 'thread priorities are read from Linux /proc' }, async () => {
  const lowered = (threads: Thread[], output: string) => /V8 helper threads at low priority/.test(output) && threads.filter((t) => t.nice === 19).length >= 4 + 1;
  await withServer({}, lowered, (threads, output) => {
    const [main, ...others] = threads;
    assert.equal(main!.nice, 0, 'the serving thread');
    const low = others.filter((t) => t.nice === 19);
    assert.equal(low.length, 4 + 1, `V8's four helpers and the read thread: ${JSON.stringify(threads)}`);
    const helpers = threads.filter((t) => t.name === 'V8Worker');
    assert.ok(helpers.every((t) => t.nice === 19), `V8 helpers, where Node names them: ${JSON.stringify(helpers)}`);
    assert.ok(threads.filter((t) => t.name === 'libuv-worker').every((t) => t.nice === 0), 'libuv\'s pool, where Node names it, keeps the process\'s priority');
    const lowered = /(\d+) V8 helper threads at low priority/.exec(output);
    assert.equal(Number(lowered?.[1]), low.length - 1, 'the start says how many helpers it lowered');
  });
});

test('without read threads: every thread keeps the process\'s priority', { skip: !linux && 'thread priorities are read from Linux /proc' }, async () => {
  await withServer({ LEDGER_READ_THREADS: '0' }, (_threads, output) => /market data:/.test(output), (threads) => {
    assert.deepEqual(threads.filter((t) => t.nice !== 0), []);
  });
});

/** Threads as /proc lists them at the start of `node` (main, V8's scheduler and helpers, the inspector's signal thread, libuv's pool), from real processes. */
const layouts: Record<string, ThreadName[]> = {
  'Node 20': [7992, 7993, 7994, 7995, 7996, 7997, 7998, 7999, 8000, 8001, 8002].map((tid) => ({ tid, name: 'node' })),
  'Node 22': [[14333, 'node'], [14334, 'DelayedTaskSche'], [14335, 'node'], [14336, 'node'], [14337, 'node'], [14338, 'node'], [14339, 'node'],
    [14340, 'libuv-worker'], [14341, 'libuv-worker'], [14342, 'libuv-worker'], [14343, 'libuv-worker']].map(([tid, name]) => ({ tid: tid as number, name: name as string })),
  'Node 24': [[8349, 'MainThread'], [8350, 'DelayedTaskSche'], [8351, 'V8Worker'], [8352, 'V8Worker'], [8353, 'V8Worker'], [8354, 'V8Worker'], [8355, 'SignalInspector'],
    [8356, 'libuv-worker'], [8357, 'libuv-worker'], [8358, 'libuv-worker'], [8359, 'libuv-worker']].map(([tid, name]) => ({ tid: tid as number, name: name as string })),
};

test('V8\'s helpers are found in the thread layouts of Node 20, 22 and 24, and nowhere else', () => {
  assert.deepEqual(v8HelpersAmong(layouts['Node 20']!, 4), [7994, 7995, 7996, 7997]);
  assert.deepEqual(v8HelpersAmong(layouts['Node 22']!, 4), [14335, 14336, 14337, 14338]);
  assert.deepEqual(v8HelpersAmong(layouts['Node 24']!, 4), [8351, 8352, 8353, 8354]);
  assert.deepEqual(v8HelpersAmong(layouts['Node 24']!, null), [8351, 8352, 8353, 8354], 'named: whatever the pool size');
  assert.deepEqual(v8HelpersAmong(layouts['Node 20']!, null), [], 'a pool size Node chose: unknown, so none');
  assert.deepEqual(v8HelpersAmong(layouts['Node 22']!, 6), [], 'six after the scheduler would take libuv\'s');
  assert.deepEqual(v8HelpersAmong([{ tid: 1, name: 'ledger' }, { tid: 2, name: 'node' }, { tid: 3, name: 'node' }], 4), [], 'an unknown layout: none');
});
