// The service under libfiu (Debian's fiu-utils) for the fault tests: `fiu-run -x` preloads
// libfiu's POSIX wrappers into the service's process, and `fiu-ctrl` turns a failure point on
// (the call fails with EIO) or off while it runs. fiu-run execs the service, so the child's pid
// is the service's, which names its control FIFOs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { LedgerNode } from './ledger-node.ts';
import { acknowledged, assertAcknowledgedDurable, ledgerVerify, summary, WriteLoad, type LoadAgent, type Outcome } from './load.ts';
import { freePort } from './ports.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const EIO = 5;
export const SYNC_POINTS = ['posix/io/sync/fsync', 'posix/io/sync/fdatasync'];
/** pwrite and pwrite64 (SQLite writes WAL frames with pwrite64). */
export const WRITE_POINTS = ['posix/io/rw/pwrite'];

/** A fresh SQLite database with three agents, and the service on it under fiu-run (remote control on). */
export async function serviceUnderFiu(dir: string): Promise<{ node: LedgerNode; agents: LoadAgent[]; path: string; control: (command: string, points: string[]) => void }> {
  const path = join(dir, 'ledger.db');
  const setup = new SqliteStore(path);
  await setup.migrate();
  const agents: LoadAgent[] = [];
  for (const i of [1, 2, 3]) {
    const handle = `fiu-${process.pid}-${i}`;
    const created = await new Operators(setup, systemClock).createAgent({ handle });
    assert.ok(created.ok);
    agents.push({ agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret });
  }
  await setup.close();
  const fifo = join(dir, 'fiu-ctrl');
  const node = new LedgerNode('fiu', await freePort(), { LEDGER_DATABASE_URL: `sqlite:${path}` }, dir, ['fiu-run', '-x', '-f', fifo]);
  try {
    await node.start({}, 60_000);
  } catch (err) {
    await node.kill(); // a start that timed out leaves the process running
    throw err;
  }
  // fiu-run execs the service: the child's pid is the service's, which names its control FIFOs.
  const control = (command: string, points: string[]) => {
    const args = points.flatMap((name) => ['-c', `${command} name=${name}${command === 'enable' ? `,failinfo=${EIO}` : ''}`]);
    const done = spawnSync('fiu-ctrl', ['-f', fifo, ...args, String(node.pid)], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(done.status, 0, `fiu-ctrl ${args.join(' ')}: ${done.stdout}${done.stderr}`);
    assert.doesNotMatch(done.stdout, /error/i, `fiu-ctrl ${args.join(' ')}`);
  };
  return { node, agents, path, control };
}

/** Waits until `n` writes sent since `since` were refused. */
export async function refusedSince(outcomes: Outcome[], since: number, n: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; outcomes.filter((o) => o.sentAt >= since && o.status !== 201).length < n;) {
    if (Date.now() > deadline) assert.fail(`fewer than ${n} writes refused within 30 s: ${summary(outcomes.filter((o) => o.sentAt >= since))}`);
    await sleep(20);
  }
}

/** Waits until `n` writes sent since `since` have been answered (whatever the answer). */
export async function answeredSince(outcomes: Outcome[], since: number, n: number): Promise<Outcome[]> {
  for (const deadline = Date.now() + 30_000; outcomes.filter((o) => o.sentAt >= since).length < n;) {
    if (Date.now() > deadline) assert.fail(`fewer than ${n} writes answered within 30 s`);
    await sleep(20);
  }
  return outcomes.filter((o) => o.sentAt >= since);
}

export const readyz = async (node: LedgerNode) => {
  const res = await fetch(`${node.url}/readyz`);
  return { status: res.status, body: await res.text() };
};

/** Restarts the service without the failure library and checks what the next start finds. */
export async function restartAndVerify(t: TestContext, setup: { node: LedgerNode; agents: LoadAgent[]; path: string }, outcomes: Outcome[]): Promise<void> {
  const { node, agents, path } = setup;
  await node.kill();
  await node.start({}, 60_000, []);
  assert.equal((await readyz(node)).status, 200, 'ready again after the restart');
  const writes = new WriteLoad(agents.map((agent) => ({ agent, target: () => ({ name: node.name, url: node.url }) })), { maxPerWriter: 2 }).start();
  const after = await writes.finished();
  assert.equal(acknowledged(after).length, after.length, `writes are recorded after the restart: ${summary(after)}`);
  for (const agent of agents) {
    const verified = await ledgerVerify(`${node.url}/v1/export?agent=${agent.handle}`);
    assert.equal(verified.code, 0, `ledger verify of ${agent.handle}'s export: ${verified.out}`);
  }
  await node.terminate();
  const store = new SqliteStore(path);
  await store.migrate();
  try {
    assert.equal(store.db.pragma('integrity_check', { simple: true }), 'ok');
    const records = await assertAcknowledgedDurable(store, agents, [...outcomes, ...after]);
    t.diagnostic(`after the restart: ${records} records in chains that verify, every one of ${acknowledged(outcomes).length + after.length} acknowledged among them`);
  } finally {
    await store.close();
  }
}

