// Tooling self-test (test/tooling/, reported apart from the product tests): the cluster's own Redis
// (test/support/redis-server.ts) stops, and a stop after the server died of a signal returns at
// once instead of waiting for an 'exit' that has already been (a teardown that never ended).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { skipUnlessAble } from '../support/own-servers.ts';
import { RedisServer } from '../support/redis-server.ts';

const skip = skipUnlessAble('redis-server');

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('RedisServer.stop', { skip }, () => {
  test('stops a running server, and returns at once for one killed by a signal', async () => {
    const running = await RedisServer.start();
    assert.ok(await settlesWithin(running.stop(), 10_000), 'a running server stops on SIGTERM');

    const killed = await RedisServer.start();
    const pid = killed.pid!;
    process.kill(pid, 'SIGKILL');
    for (const deadline = Date.now() + 10_000; isAlive(pid) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setImmediate(resolve)); // its 'exit' event, emitted now
    assert.ok(await settlesWithin(killed.stop(), 5_000), 'stop() of a server killed by SIGKILL returns');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
