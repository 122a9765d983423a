// Issue 16, finding 4: a Redis outage must not turn requests into 500s. The rate limiter falls
// back to each process's own budget (said once in the log and on /readyz as degraded), public
// reads never depend on Redis, and the shared budget resumes when Redis returns.
import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { skipUnless } from '../support/services.ts';
import { idempotencyKey, postDecision, uniqueHandle } from '../support/app.ts';
import { validDecision } from './record-helpers.ts';

const skip = await skipUnless('redis');

/** A TCP proxy to Redis that can be cut (every connection dropped, new ones refused) and restored. */
function redisProxy() {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (cut) return client.destroy();
    const upstream = connect(6379, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s)).on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return {
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))),
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore: () => {
      cut = false;
    },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(resolve);
    }),
  };
}

const until = async (what: string, check: () => Promise<boolean>, ms = 8_000) => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
};

describe('a Redis outage', { skip }, () => {
  const proxy = redisProxy();
  let store: LedgerStore;
  let ledger: LedgerApp;
  let log = '';
  let secret = '';

  before(async () => {
    const port = await proxy.listen();
    store = openStore('sqlite::memory:');
    await store.migrate();
    const config = loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:', LEDGER_REDIS_URL: `redis://127.0.0.1:${port}`, LEDGER_WRITE_LIMIT_PER_MIN: '1000' });
    const stream = new Writable({ write(chunk, _encoding, done) { log += chunk.toString(); done(); } });
    ledger = await buildApp(compose({ store, config, checkSignature: signatureChecker(store) }), { logger: { level: 'info', stream } });
    const created = await new Operators(store, systemClock).createAgent({ handle: uniqueHandle('redis') });
    assert.ok(created.ok);
    secret = created.value.apiKey.secret;
  });
  after(async () => {
    await ledger.close();
    await store.close();
    await proxy.close();
  });

  const ready = async () => (await ledger.app.inject({ method: 'GET', url: '/readyz' })).json() as { status: string };
  const write = async () => (await postDecision(ledger, secret, validDecision(), idempotencyKey())).statusCode;

  test('writes and reads keep answering; /readyz says degraded; the shared budget resumes', async () => {
    await until('Redis to be ready', async () => (await ready()).status === 'ready');
    assert.equal(await write(), 201);

    proxy.cut();
    await until('the limiter to notice', async () => (await ready()).status === 'degraded');
    for (let i = 0; i < 5; i++) assert.equal(await write(), 201, 'writes are counted locally, not failed');
    const read = await ledger.app.inject({ method: 'GET', url: '/v1/ledger?limit=5' });
    assert.equal(read.statusCode, 200);
    assert.equal((log.match(/Redis is unreachable/g) ?? []).length, 1, 'the fallback is logged once');

    proxy.restore();
    await until('the shared budget to resume', async () => (await ready()).status === 'ready', 15_000);
    assert.equal(await write(), 201);
    assert.match(log, /Redis is back/);
    assert.doesNotMatch(log, /Unhandled error event/);
  });
});
