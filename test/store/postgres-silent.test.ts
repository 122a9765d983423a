// Issue 16, finding 3: a database that stops answering (a proxy that stops forwarding) makes
// writes fail fast with 503 service_unavailable and Retry-After, and /readyz answer 503 in
// bounded time; when it answers again, writes are recorded again. Nothing acknowledged is lost.
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres/store.ts';
import { dropPostgresSchema, freshPostgresUrl, skipUnless } from '../support/services.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies, validDecision } from '../api/record-helpers.ts';

const skip = await skipUnless('postgres');

/** A TCP proxy to PostgreSQL that can go silent: it keeps every connection open and forwards nothing. */
class SilenceableProxy {
  private silent = false;
  private readonly sockets = new Set<Socket>();
  readonly server: Server = createServer((client) => {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client)).on('error', () => undefined);
    if (this.silent) return; // accepted, never answered
    const upstream = connect(5432, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream)).on('error', () => client.destroy());
    client.on('data', (chunk) => { if (!this.silent) upstream.write(chunk); });
    upstream.on('data', (chunk) => { if (!this.silent) client.write(chunk); });
    client.on('close', () => upstream.destroy());
  });

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  silence(): void {
    this.silent = true;
  }

  /** Answers again: connections silenced mid-conversation are cut (their state is lost), new ones forward. */
  restore(): void {
    this.silent = false;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('a PostgreSQL that stops answering', { skip }, () => {
  const proxy = new SilenceableProxy();
  let url: string;
  let store: PostgresStore;
  let t: TestApp;

  before(async () => {
    url = freshPostgresUrl();
    const port = await proxy.listen();
    const options = parsePostgresUrl(url.replace('127.0.0.1:5432', `127.0.0.1:${port}`));
    store = new PostgresStore({ ...options, timeouts: { connectMs: 800, queryMs: 1_500, statementMs: 1_200, idleInTransactionMs: 2_000, appendLockMs: 800 } });
    await store.migrate();
    t = await testApp(store);
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await proxy.close();
    await dropPostgresSchema(url);
  });

  test('writes answer 503 with Retry-After and /readyz 503, each within seconds; then writes resume', async () => {
    const agent = await t.agent();
    const first = await postDecision(t, agent.secret, validDecision(), idempotencyKey());
    assert.equal(first.statusCode, 201, first.body);

    proxy.silence();
    const started = Date.now();
    const writes = await Promise.all(Array.from({ length: 5 }, () => postDecision(t, agent.secret, validDecision(), idempotencyKey())));
    const writeSeconds = (Date.now() - started) / 1000;
    for (const res of writes) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error.code, 'service_unavailable');
      assert.ok(res.json().error.request_id);
      assert.equal(res.headers['retry-after'], '2');
    }
    assert.ok(writeSeconds < 6, `the writes failed within ${writeSeconds} s`);

    const readyStarted = Date.now();
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.ok(Date.now() - readyStarted < 3_000, '/readyz answered within 3 s');

    proxy.restore();
    let resumed = 0;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const res = await postDecision(t, agent.secret, validDecision(), idempotencyKey());
      if (res.statusCode === 201) {
        resumed = Date.now();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(resumed > 0, 'writes are recorded again once the database answers');
    await assertChainVerifies(store, agent, 2);
  });
});
