// At least once across a crash, on both stores: the real service (`node bin/ledger.js serve` in a
// child process) is killed with SIGKILL while a delivery is in flight (the receiver holds each
// one a while before answering), twice; after each restart every event is delivered, in chain
// order of first arrival, each verified with standardwebhooks.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open.ts';
import { webhookEndpoints } from '../../src/webhooks/service.ts';
import { forEachStore } from '../support/stores.ts';
import { startReceiver, testKeyring, WEBHOOK_ENV } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Server = { child: ChildProcess; url: Promise<string>; exit: Promise<void> };

function serve(env: Record<string, string>): Server {
  const child = spawn(process.execPath, ['bin/ledger.js', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${output}`)));
  });
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, url, exit };
}

await forEachStore('webhooks across kill -9 of ledger serve', (kind) => {
  after(() => kind.cleanup());

  test('SIGKILL mid-delivery, twice: every event is delivered after the restart', async () => {
    const databaseUrl = await kind.freshUrl();
    const setup = openStore(databaseUrl);
    await setup.migrate();
    const created = await new Operators(setup, systemClock).createAgent({ handle: `kill-${process.pid}` });
    assert.ok(created.ok);
    const { agent, apiKey } = created.value;
    let secret: string | null = null;
    // Each delivery is held 150 ms before its 200: kills land while one is in flight.
    const rx = await startReceiver(() => secret, () => ({ status: 200, delayMs: 150 }));
    const config = loadConfig({ ...WEBHOOK_ENV, LEDGER_DATABASE_URL: databaseUrl });
    const endpoint = await webhookEndpoints({ store: setup, config: config.webhooks, keyring: testKeyring(), clock: systemClock })
      .create(agent, { url: rx.url, events: ['decision.recorded'] });
    assert.ok(endpoint.ok);
    secret = endpoint.value.secret;
    await setup.close();

    const env = { ...WEBHOOK_ENV, LEDGER_DATABASE_URL: databaseUrl, LEDGER_WEBHOOKS_RETRY_BASE_MS: '50', LEDGER_LOG_LEVEL: 'info' };
    let server = serve(env);
    try {
      const base = await server.url;
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await fetch(`${base}/v1/decisions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey.secret}`, 'content-type': 'application/json', 'idempotency-key': `kill-${process.pid}-${i}` },
          body: JSON.stringify({ symbol: 'AAPL', action: 'BUY', quantity: i + 1 }),
        });
        assert.equal(res.status, 201);
        ids.push(((await res.json()) as { id: string }).id);
      }
      for (const after of [5, 15]) {
        await rx.waitFor(() => rx.received.length > after && rx.received.length > rx.accepted.length, 30_000, 'a delivery in flight');
        server.child.kill('SIGKILL');
        await server.exit;
        server = serve(env);
        await server.url;
      }
      await rx.waitFor(() => new Set(rx.accepted.map((d) => d.event.data.id)).size === 40, 60_000, 'every event after the restarts');
      assert.deepEqual(rx.rejected, []);
      const firstArrivals = [...new Set(rx.received.map((d) => d.event.data.id as string))];
      assert.deepEqual(firstArrivals, ids, 'first arrivals in chain order');
      assert.ok(rx.received.length >= 40);
    } finally {
      if (server.child.exitCode === null) {
        server.child.kill('SIGKILL');
        await server.exit;
      }
      await rx.close();
    }
  });
});

