// The periodic broker sync (SyncWorker, brokers/service.ts) on the job loop, over stand-in
// connections: interval 0 never syncs; the first round comes one interval after the start and
// each later one an interval after the previous; a failed round is logged and the next still
// comes; a stop waits for the round in flight (which syncs no further connection) and then for
// the syncs started on demand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerConnection } from '../../src/brokers/port.ts';
import type { BrokerConnections } from '../../src/brokers/connections.ts';
import { SyncWorker } from '../../src/brokers/service.ts';

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail('the condition never held');
    await delay(2);
  }
}

function standIn(ids: string[], opts: { syncMs?: number; failList?: () => boolean } = {}) {
  const synced: string[] = [];
  const state = { drained: 0, inSync: 0 };
  const connections = {
    async listSyncable(): Promise<BrokerConnection[]> {
      if (opts.failList?.()) throw new Error('database down');
      return ids.map((id) => ({ id }) as BrokerConnection);
    },
    async syncNow(id: string) {
      state.inSync++;
      await delay(opts.syncMs ?? 0);
      synced.push(id);
      state.inSync--;
      return { kind: 'busy' as const };
    },
    async drain() {
      state.drained++;
    },
  } as unknown as BrokerConnections;
  return { connections, synced, state };
}

test('interval 0: never a round; a stop still drains', async () => {
  const { connections, synced, state } = standIn(['a']);
  const worker = new SyncWorker(connections, 0, () => undefined);
  worker.start();
  await delay(50);
  await worker.stop();
  assert.deepEqual(synced, []);
  assert.equal(state.drained, 1);
});

test('the first round comes one interval after the start, then a round every interval', async () => {
  const { connections, synced } = standIn(['a', 'b']);
  const worker = new SyncWorker(connections, 0.1, () => undefined);
  const started = Date.now();
  worker.start();
  await delay(40);
  assert.deepEqual(synced, [], 'no round at the start');
  await until(() => synced.length >= 2);
  assert.ok(Date.now() - started >= 95, 'one interval passed first');
  assert.deepEqual(synced.slice(0, 2), ['a', 'b'], 'every connection, one after another');
  await until(() => synced.length >= 4);
  await worker.stop();
});

test('a failed round is logged and the next round still comes', async () => {
  let failures = 1;
  const { connections, synced } = standIn(['a'], { failList: () => failures-- > 0 });
  const logged: unknown[][] = [];
  const worker = new SyncWorker(connections, 0.05, (...args) => logged.push(args));
  worker.start();
  await until(() => synced.length >= 1);
  await worker.stop();
  assert.deepEqual(logged[0], ['error', 'broker sync round failed', { error: 'database down' }]);
});

test('a stop waits for the round in flight, which syncs no further connection, then drains', async () => {
  const { connections, synced, state } = standIn(['a', 'b', 'c'], { syncMs: 100 });
  const worker = new SyncWorker(connections, 0.02, () => undefined);
  worker.start();
  await until(() => state.inSync === 1);
  await worker.stop();
  assert.equal(state.inSync, 0, 'the sync in flight ended before the stop returned');
  assert.deepEqual(synced, ['a']);
  assert.equal(state.drained, 1);
});
