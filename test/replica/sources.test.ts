// The store port's newestSortKey, on both stores, and the read-routing rules of
// ledger/public/sources.ts over a replica that is behind: here a copy of a SQLite ledger taken
// earlier (VACUUM INTO), the same thing a paused streaming replica is (its end-to-end test on
// PostgreSQL is replica.test.ts). A miss below the replica's newest record never asks the primary.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ReadSources } from '../../src/ledger/public/sources.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { StoreUnavailable, type LedgerStore } from '../../src/store/port.ts';
import { sortKeyOf } from '../../src/core/chain.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { postMany } from '../public/helpers.ts';

await forEachStore('newestSortKey', (kind) => {
  let t: TestApp | undefined;
  after(() => closeTestApp(t, kind));

  test('is null for an empty ledger, then the sort key of the newest record of any agent', async () => {
    t = await testApp(await kind.open());
    assert.equal(await t.store.newestSortKey(), null);
    const a = await t.agent();
    const b = await t.agent();
    await postMany(t, a.secret, 2);
    const [newest] = await postMany(t, b.secret, 1);
    assert.equal(await t.store.newestSortKey(), sortKeyOf(newest!));
  });
});

/** The store with a count of the calls of each method. */
function counted(store: LedgerStore): { store: LedgerStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

test('over a replica that is behind: hits and true misses stay on it, newer records and agents come from the primary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-sources-'));
  const primaryStore = new SqliteStore(join(dir, 'primary.db'));
  await primaryStore.migrate();
  const t = await testApp(primaryStore);
  let replica: SqliteStore | undefined;
  try {
    const a = await t.agent();
    const [old] = await postMany(t, a.secret, 2);
    primaryStore.db.exec(`VACUUM INTO '${join(dir, 'replica.db')}'`);
    replica = new SqliteStore(join(dir, 'replica.db'));
    await replica.migrate();
    const [fresh] = await postMany(t, a.secret, 1);
    const newcomer = await t.agent();
    const { store: primary, calls } = counted(primaryStore);
    const sources = new ReadSources(primary, { replica });

    const hit = await sources.record(replica, old!);
    assert.equal(hit?.store, replica, 'a record the replica has comes from it');
    const newer = await sources.record(replica, fresh!);
    assert.equal(newer?.value.id, fresh);
    assert.equal(newer?.store, primary, 'a record newer than the replica comes from the primary');

    calls.clear();
    assert.equal(await sources.record(replica, 'dec_00000000000000000000000000'), null);
    assert.equal(calls.get('findRecord'), undefined, 'a miss below the replica\'s newest record never asks the primary');
    assert.equal(await sources.record(replica, 'dec_7ZZZZZZZZZZZZZZZZZZZZZZZZZ'), null);
    assert.equal(calls.get('findRecord'), 1, 'a miss above it asks the primary once');

    assert.equal((await sources.agentByHandle(replica, a.handle))?.store, replica);
    assert.equal((await sources.agentByHandle(replica, newcomer.handle))?.store, primary, 'an agent the replica does not know yet');
    assert.equal(await sources.agentByHandle(replica, 'nobody-at-all'), null);

    const early = await sources.chain(replica, a.agentId, 0);
    assert.deepEqual([early.store, early.value.seq], [replica, 2], 'a page the replica can answer');
    const tail = await sources.chain(replica, a.agentId, 2);
    assert.deepEqual([tail.store, tail.value.seq], [primary, 3], 'a page after the replica\'s head comes from the primary');
  } finally {
    await t.close();
    await replica?.close();
    await primaryStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a replica that fails is left for the primary, and used again once it answers', async () => {
  let now = 0;
  const changes: boolean[] = [];
  let failing = true;
  const primary = { findRecord: async () => null } as unknown as LedgerStore;
  const down = async () => { if (failing) throw new StoreUnavailable('replica down'); };
  const replica = { findRecord: async () => { await down(); return null; }, ping: down } as unknown as LedgerStore;
  const sources = new ReadSources(primary, { replica, onReplica: (up) => changes.push(up), now: () => now });
  const used: string[] = [];
  const read = () => sources.read(async (store) => {
    used.push(store === replica ? 'replica' : 'primary');
    await store.findRecord('dec_x');
  });
  await read(); // the replica fails, the primary answers
  await read(); // the replica is left alone meanwhile
  now += 5_001;
  failing = false;
  await read(); // tried again, and it answers
  assert.deepEqual(used, ['replica', 'primary', 'primary', 'replica']);
  assert.deepEqual(changes, [false, true]);
});

test('a primary that fails during a read on the replica is the caller\'s 503, not a reason to leave the replica', async () => {
  const changes: boolean[] = [];
  const primary = { findRecord: async () => { throw new StoreUnavailable('primary down'); } } as unknown as LedgerStore;
  const replica = { findRecord: async () => null, newestSortKey: async () => null, ping: async () => undefined } as unknown as LedgerStore;
  const sources = new ReadSources(primary, { replica, onReplica: (up) => changes.push(up) });
  const used: string[] = [];
  const read = () => sources.read(async (store) => {
    used.push(store === replica ? 'replica' : 'primary');
    return sources.record(store, 'dec_7ZZZZZZZZZZZZZZZZZZZZZZZZZ'); // newer than the replica: asks the primary
  });
  await assert.rejects(read(), /primary down/);
  await assert.rejects(read(), /primary down/);
  assert.deepEqual(used, ['replica', 'replica'], 'public reads stay on the replica');
  assert.deepEqual(changes, []);
});
