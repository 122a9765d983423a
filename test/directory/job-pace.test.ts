// The directory job's pace, on both stores: a turn that found a few new records waits its poll
// interval before the next (an agent recording all the time is followed every turn, not at once
// after each record: the job once went round without a pause while any agent wrote, a stream of
// report refreshes and projections beside the record path); a turn that read as many records as
// it may, or found more stale agents than a batch, goes again at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DirectoryJob } from '../../src/directory/job.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';

const POLL_MS = 5_000;
const RECORDS = 5;

await forEachStore('the directory job\'s pace', (kind) => {
  let t: TestApp;
  let job: DirectoryJob;
  let secret: string;

  async function record(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await postDecision(t, secret, { symbol: 'AAPL', action: 'BUY', quantity: '1', thesis: `pace ${i}` });
      assert.equal(res.statusCode, 201, res.body);
    }
  }

  const level = async () => assert.deepEqual((await t.store.directory.staleAgents('', 10_000)).stale, [], 'every row level with its agent');

  before(async () => {
    t = await testApp(await kind.open());
    secret = (await t.agent()).secret;
    await record(1);
    job = new DirectoryJob({ store: t.store, clock: systemClock, records: RECORDS, batch: 2, pollMs: POLL_MS });
    assert.equal(await job.turn(), POLL_MS, 'the first turn projects the new agent and waits');
    await level();
  });
  after(() => closeTestApp(t, kind));

  test('a turn that found a few new records projects their agent and waits its poll interval', async () => {
    await record(2);
    assert.equal(await job.turn(), POLL_MS);
    await level();
    assert.equal(await job.turn(), POLL_MS, 'and so does a turn that found none');
  });

  test('a turn that read as many records as it may goes again at once, until it has read them all', async () => {
    await record(RECORDS + 1);
    assert.equal(await job.turn(), 0);
    assert.equal(await job.turn(), POLL_MS);
    await level();
  });

  test('a turn that found more stale agents than a batch goes again at once', async () => {
    for (let i = 0; i < 3; i++) await t.agent();
    assert.equal(await job.turn(), 0, 'three new agents, a batch of two');
    assert.equal(await job.turn(), POLL_MS);
    await level();
  });
});
