// A failed fsync and a failed write, injected for real inside the service's process: the service
// runs under libfiu's `fiu-run -x` (Debian's fiu-utils), whose preloaded POSIX wrappers make
// fsync/fdatasync (SQLite's own and the WAL sync on libuv's thread pool) or pwrite (SQLite's WAL
// writes) fail with EIO once `fiu-ctrl` enables the failure point, while writes keep coming.
// A failed fsync: no write whose sync failed is answered 201, every write after it gets 503 with
// Retry-After, even once the disk is healthy again, until a restart; reads go on; /readyz says not
// ready; the cause is logged once. A failed write: 503 with Retry-After while it fails, writes resume once it
// stops (as on a full disk). After a restart every acknowledged record is there and chains verify
// (`ledger verify` of each agent's export). Skipped with a message without fiu-run (failed under CI=true, where .ci/run installs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../src/ledger/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import {
  acknowledged, assertAcknowledgedDurable, assertOnlyUnavailable, ledgerVerify, summary, WriteLoad, type LoadAgent, type Outcome,
} from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { freePort } from '../support/ports.ts';

const skip = skipUnlessAble('fiu-run');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const EIO = 5;
const SYNC_POINTS = ['posix/io/sync/fsync', 'posix/io/sync/fdatasync'];
/** pwrite and pwrite64 (SQLite writes WAL frames with pwrite64). */
const WRITE_POINTS = ['posix/io/rw/pwrite'];

/** A fresh SQLite database with three agents, and the service on it under fiu-run (remote control on). */
async function serviceUnderFiu(dir: string): Promise<{ node: LedgerNode; agents: LoadAgent[]; path: string; control: (command: string, points: string[]) => void }> {
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
  await node.start();
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
async function refusedSince(outcomes: Outcome[], since: number, n: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; outcomes.filter((o) => o.sentAt >= since && o.status !== 201).length < n;) {
    if (Date.now() > deadline) assert.fail(`fewer than ${n} writes refused within 30 s: ${summary(outcomes.filter((o) => o.sentAt >= since))}`);
    await sleep(20);
  }
}

/** Waits until `n` writes sent since `since` have been answered (whatever the answer). */
async function answeredSince(outcomes: Outcome[], since: number, n: number): Promise<Outcome[]> {
  for (const deadline = Date.now() + 30_000; outcomes.filter((o) => o.sentAt >= since).length < n;) {
    if (Date.now() > deadline) assert.fail(`fewer than ${n} writes answered within 30 s`);
    await sleep(20);
  }
  return outcomes.filter((o) => o.sentAt >= since);
}

const readyz = async (node: LedgerNode) => {
  const res = await fetch(`${node.url}/readyz`);
  return { status: res.status, body: await res.text() };
};

/** Restarts the service without the failure library and checks what the next start finds. */
async function restartAndVerify(t: TestContext, setup: { node: LedgerNode; agents: LoadAgent[]; path: string }, outcomes: Outcome[]): Promise<void> {
  const { node, agents, path } = setup;
  await node.kill();
  await node.start({}, 30_000, []);
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

describe('a failed fsync of the WAL, injected with libfiu', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-fsync-'));
  let setup: Awaited<ReturnType<typeof serviceUnderFiu>>;
  before(async () => {
    setup = await serviceUnderFiu(dir);
  });
  after(async () => {
    await setup?.node.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('no write whose sync failed is answered 201; writes stop with 503 and Retry-After until a restart; /readyz says not ready; the log says why once', async (t) => {
    const { node, agents, control } = setup;
    assert.equal((await readyz(node)).status, 200);
    const writes = new WriteLoad(agents.map((agent) => ({ agent, target: () => ({ name: node.name, url: node.url }) })), { pauseMs: 20 }).start();
    await writes.acknowledgedAtLeast(30);

    control('enable', SYNC_POINTS);
    const failingFrom = Date.now();
    await refusedSince(writes.outcomes, failingFrom, 10);
    const whileFailing = await readyz(node);
    const profile = await fetch(`${node.url}/v1/agents/${agents[0]!.handle}`);
    control('disable', SYNC_POINTS);
    const healedAt = Date.now();
    const afterHealing = await answeredSince(writes.outcomes, healedAt, 15);
    const stillRefusing = await readyz(node);
    const outcomes = await writes.stop();

    const firstRefusal = Math.min(...outcomes.filter((o) => o.status !== 201).map((o) => o.answeredAt));
    t.diagnostic(`fsync failing from ${failingFrom}: clients saw ${summary(outcomes.filter((o) => o.sentAt >= failingFrom))}; ` +
      `/readyz ${whileFailing.status} ${whileFailing.body}, after the disk healed ${stillRefusing.status}`);
    assertOnlyUnavailable(outcomes);
    assert.ok(acknowledged(outcomes).length >= 30);
    assert.deepEqual(acknowledged(outcomes).filter((o) => o.sentAt >= failingFrom), [], 'no write sent once fsync fails is acknowledged');
    assert.deepEqual(acknowledged(outcomes).filter((o) => o.answeredAt > firstRefusal), [], 'after the first refusal, nothing more is acknowledged');
    assert.deepEqual(acknowledged(afterHealing), [], 'a healthy fsync later does not bring writes back: pages may have been lost');
    assert.equal(whileFailing.status, 503, `/readyz after a failed fsync: ${whileFailing.body}`);
    assert.equal(profile.status, 200, 'public reads go on');
    assert.equal(stillRefusing.status, 503, `/readyz until the restart: ${stillRefusing.body}`);
    const causes = node.output.match(/fsync of the write-ahead log failed;[^"]*EIO/g) ?? [];
    assert.equal(causes.length, 1, `the cause is logged once:\n${node.output.slice(-3000)}`);
    assert.match(node.output, /writes are refused until restart/);
    assert.ok(node.running);
    assert.doesNotMatch(node.output, /Unhandled|uncaught|FATAL ERROR/i);

    await restartAndVerify(t, setup, outcomes);
  });
});

describe('a failed write to the WAL, injected with libfiu', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-wal-write-'));
  let setup: Awaited<ReturnType<typeof serviceUnderFiu>>;
  before(async () => {
    setup = await serviceUnderFiu(dir);
  });
  after(async () => {
    await setup?.node.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('no write whose WAL write failed is answered 201; 503 with Retry-After while writes fail; recorded again once they do not', async (t) => {
    const { node, agents, control } = setup;
    const writes = new WriteLoad(agents.map((agent) => ({ agent, target: () => ({ name: node.name, url: node.url }) })), { pauseMs: 20 }).start();
    await writes.acknowledgedAtLeast(30);

    control('enable', WRITE_POINTS);
    const failingFrom = Date.now();
    await refusedSince(writes.outcomes, failingFrom, 10);
    const whileFailing = await readyz(node);
    control('disable', WRITE_POINTS);
    const healedAt = Date.now();
    await writes.acknowledgedAtLeast(10);
    const outcomes = await writes.stop();

    t.diagnostic(`WAL writes failing: clients saw ${summary(outcomes.filter((o) => o.sentAt >= failingFrom && o.sentAt < healedAt))}; ` +
      `/readyz ${whileFailing.status} ${whileFailing.body}; after: ${summary(outcomes.filter((o) => o.sentAt >= healedAt))}`);
    assertOnlyUnavailable(outcomes);
    assert.deepEqual(acknowledged(outcomes).filter((o) => o.sentAt >= failingFrom && o.answeredAt < healedAt), [],
      'no write is acknowledged while WAL writes fail');
    assert.match(node.output, /disk I\/O error/, 'the log says why');
    assert.ok(node.running);
    assert.doesNotMatch(node.output, /Unhandled|uncaught|FATAL ERROR/i);

    await restartAndVerify(t, setup, outcomes);
  });
});
