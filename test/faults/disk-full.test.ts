// The disk fills up under the SQLite file (a 20 MB tmpfs, mounted for the test: it needs root)
// while large decisions are written to the real service: writes then answer 503
// service_unavailable with Retry-After, never a 500 and never a crash; reads go on; once there is
// room again (the tmpfs grown), writes are recorded again, and every acknowledged write is in a
// chain that verifies, in a database file that passes SQLite's integrity check.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import {
  acknowledged, assertAcknowledgedDurable, assertOnlyUnavailable, firstAcknowledgedAfter, seconds, summary, WriteLoad, type LoadAgent,
} from '../support/load.ts';
import { freePort } from '../support/ports.ts';
import { skipUnlessAble } from '../support/own-servers.ts';

const mountPoint = mkdtempSync(join(tmpdir(), 'ledger-disk-full-'));
const mount = (...args: string[]) => spawnSync('mount', args, { encoding: 'utf8' });

/** Mounts the tmpfs, or says why not (skipped visibly; under CI=true, failed). */
function mountTmpfs(): false | string {
  const cannot = skipUnlessAble('root');
  if (cannot) return cannot;
  const mounted = mount('-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mountPoint);
  if (mounted.status === 0) return false;
  const message = `cannot mount a tmpfs (${mounted.stderr.trim()}); skipping the disk-full test`;
  if (process.env.CI === 'true') throw new Error(`CI=true requires a tmpfs: ${message}`);
  console.warn(`# SKIP ${message}`);
  return message;
}

const skip = mountTmpfs();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A decision of about 100 KB (its metadata), so that 20 MB fill within seconds. */
const largeDecision = () => ({ symbol: 'AAPL', action: 'BUY', metadata: { notes: 'x'.repeat(100_000) } });

describe('the disk under the SQLite file fills up', { skip }, () => {
  const databaseUrl = `sqlite:${join(mountPoint, 'ledger.db')}`;
  let node: LedgerNode;
  let agent: LoadAgent;

  before(async () => {
    const setup = new SqliteStore(join(mountPoint, 'ledger.db'));
    await setup.migrate();
    const handle = `full-${process.pid}`;
    const created = await new Operators(setup, systemClock).createAgent({ handle });
    assert.ok(created.ok);
    agent = { agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret };
    await setup.close();
    node = new LedgerNode('disk-full', await freePort(), { LEDGER_DATABASE_URL: databaseUrl }, mountPoint);
    await node.start();
  });
  after(async () => {
    await node?.terminate();
    if (!skip && spawnSync('umount', [mountPoint]).status !== 0) spawnSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  test('writes answer 503 with Retry-After while it is full, reads go on, and writes resume once there is room', async (t: TestContext) => {
    const target = () => ({ name: node.name, url: node.url });
    const writes = new WriteLoad([0, 1, 2].map(() => ({ agent, target })), { body: largeDecision, pauseMs: 50 }).start();
    const refusedSince = (n: number) => writes.outcomes.filter((o) => o.status !== 201).length >= n;
    for (const deadline = Date.now() + 60_000; !refusedSince(15);) {
      if (Date.now() > deadline) assert.fail(`the disk never filled: ${summary(writes.outcomes)}`);
      await sleep(50);
    }
    const fullAt = Math.min(...writes.outcomes.filter((o) => o.status !== 201).map((o) => o.answeredAt));
    const profile = await fetch(`${node.url}/v1/agents/${agent.handle}`);
    const ready = await fetch(`${node.url}/readyz`);

    assert.equal(mount('-o', 'remount,size=200m', mountPoint).status, 0, 'the tmpfs grows');
    const roomAt = Date.now();
    let recovered: number | null = null;
    while (recovered === null && Date.now() - roomAt < 30_000) {
      recovered = firstAcknowledgedAfter(writes.outcomes, roomAt);
      await sleep(25);
    }
    const outcomes = await writes.stop();
    const whileFull = outcomes.filter((o) => o.answeredAt >= fullAt && o.answeredAt < roomAt);
    t.diagnostic(`disk full: clients saw ${summary(whileFull)}; /readyz ${ready.status}; a public read ${profile.status}; ` +
      `writes recorded again ${recovered === null ? 'never' : seconds(recovered - roomAt)} after there was room; ${acknowledged(outcomes).length} acknowledged in all`);

    assertOnlyUnavailable(outcomes);
    assert.equal(profile.status, 200, 'public reads go on while the disk is full');
    assert.ok(recovered !== null, `writes are recorded again once there is room: ${summary(outcomes.filter((o) => o.sentAt >= roomAt))}`);
    assert.ok(node.running, 'the node is still running');
    assert.doesNotMatch(node.output, /Unhandled|uncaught|FATAL ERROR/i);

    // kill -9, then check the file as the next start finds it.
    await node.kill();
    const store = new SqliteStore(join(mountPoint, 'ledger.db'));
    await store.migrate();
    try {
      assert.equal(store.db.pragma('integrity_check', { simple: true }), 'ok');
      await assertAcknowledgedDurable(store, [agent], outcomes);
    } finally {
      await store.close();
    }
  });
});
