// The anchors' counts by status on both stores (issue 43): kept in log_anchor_counts by triggers on
// log_anchors as anchors are inserted, confirmed and (never, but if) deleted, so the transparency
// report reads two rows instead of counting every anchor; the migration counts the anchors made before it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { StoredAnchor } from '../../src/anchor/port.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { forEachStore, runSql } from '../support/stores.ts';
import { record, testIntegrator, testLogKey } from '../log/helpers.ts';

const anchorAt = (treeSize: number): StoredAnchor => ({
  treeSize, root: Buffer.alloc(32, 7).toString('base64'), digest: new Uint8Array(32), ots: new Uint8Array([0]), status: 'pending',
  calendars: ['https://calendar.test'], block: null, createdAt: '2026-03-13T21:00:00.000Z', lastAttemptAt: null, lastError: null, attempts: 0, nextAttemptAt: null,
});

const CONFIRMED = { status: 'confirmed' as const, block: { height: 840_000, hash: '00'.repeat(32), merkleRoot: '11'.repeat(32), time: 1_773_400_000 } };

await forEachStore('the anchors counted by status as they are written', (kind) => {
  let t: TestApp;
  const treeSizes: number[] = [];
  before(async () => {
    t = await testApp(await kind.open());
    const { key } = await testLogKey();
    const integrator = testIntegrator(t.store, key);
    const a = await t.agent();
    for (let i = 0; i < 3; i++) {
      await record(t, a.secret, 1);
      await integrator.integratePending();
      treeSizes.push((await t.store.log.latestCheckpoint())!.treeSize);
    }
    await integrator.stop();
  });
  after(() => closeTestApp(t, kind));

  const session = async <T>(work: (s: NonNullable<Awaited<ReturnType<TestApp['store']['anchors']['tryAnchorJob']>>>) => Promise<T>) => {
    const s = await t.store.anchors.tryAnchorJob();
    assert.ok(s);
    try {
      return await work(s);
    } finally {
      await s.release();
    }
  };

  test('inserted pending, then confirmed: the counts follow, without counting the anchors', async () => {
    assert.deepEqual(await t.store.anchors.counts(), { confirmed: 0, pending: 0 });
    await session(async (s) => {
      for (const size of treeSizes) await s.insert(anchorAt(size));
    });
    assert.deepEqual(await t.store.anchors.counts(), { confirmed: 0, pending: 3 });
    const [first] = treeSizes;
    const stored = (await t.store.anchors.at(first!))!;
    await session((s) => s.update(first!, { ...stored, ...CONFIRMED }));
    await session((s) => s.update(first!, { ...stored, ...CONFIRMED, attempts: 5 }));
    assert.deepEqual(await t.store.anchors.counts(), { confirmed: 1, pending: 2 }, 'an update that keeps the status counts nothing');
  });

  test('the migration counts the anchors made before it', async () => {
    const before = await t.store.anchors.counts();
    const version = (kind.name === 'postgres' ? POSTGRES_MIGRATIONS : SQLITE_MIGRATIONS).findIndex((m) => m.includes('CREATE TABLE log_anchor_counts')) + 1;
    assert.ok(version > 0);
    const drop = kind.name === 'postgres'
      ? ['DROP TRIGGER log_anchors_count ON log_anchors', 'DROP FUNCTION log_anchors_count()', 'DROP TABLE log_anchor_counts']
      : ['DROP TRIGGER log_anchors_count_insert', 'DROP TRIGGER log_anchors_count_update', 'DROP TRIGGER log_anchors_count_delete', 'DROP TABLE log_anchor_counts'];
    for (const statement of [...drop, `DELETE FROM schema_migrations WHERE version = ${version}`]) await runSql(t.store, statement);
    await t.store.migrate();
    assert.deepEqual(await t.store.anchors.counts(), before);
  });
});
