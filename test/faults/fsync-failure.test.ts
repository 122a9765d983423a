// A failed fsync, injected for real inside the service's process: the service runs under libfiu's
// `fiu-run -x` (test/support/fiu.ts), whose preloaded wrappers make fsync and fdatasync (SQLite's
// own and the WAL sync on libuv's thread pool) fail with EIO once `fiu-ctrl` enables them, while
// writes keep coming. No write whose sync failed is answered 201; every write after it gets 503
// with Retry-After, even once the disk is healthy again, until a restart; reads go on; /readyz
// says not ready; the cause is logged once. After a restart every acknowledged record is there
// and the chains verify (`ledger verify` of each agent's export). Skipped with a message without
// fiu-run (failed under CI=true, where .ci/run installs it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  answeredSince, readyz, refusedSince, restartAndVerify, serviceUnderFiu, SYNC_POINTS,
} from '../support/fiu.ts';
import { acknowledged, assertOnlyUnavailable, summary, WriteLoad } from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';

const skip = skipUnlessAble('fiu-run');

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
