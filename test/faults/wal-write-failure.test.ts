// A failed write to the WAL, injected for real inside the service's process with libfiu
// (test/support/fiu.ts): pwrite (SQLite writes WAL frames with pwrite64) fails with EIO while
// writes keep coming. 503 with Retry-After while it fails and no 201, writes recorded again once
// it stops (as on a full disk: test/faults/disk-full.test.ts), and after a restart every
// acknowledged record is there and the chains verify. Skipped with a message without fiu-run
// (failed under CI=true, where .ci/run installs it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  readyz, refusedSince, restartAndVerify, serviceUnderFiu, WRITE_POINTS,
} from '../support/fiu.ts';
import { acknowledged, assertOnlyUnavailable, summary, WriteLoad } from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';

const skip = skipUnlessAble('fiu-run');

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
