// Graceful shutdown of the real server (`node bin/ledger.js serve` in a child process): SIGTERM
// in the middle of a burst of writes finishes what is in flight, accepts nothing new, loses
// nothing acknowledged, and exits 0. The logs carry no secret.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { openStore } from '../../src/store/open.ts';
import { forEachStore } from '../support/stores.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Server = { child: ChildProcess; url: Promise<string>; exit: Promise<number | null>; output: () => string };

/** Starts `ledger serve` on a free port (PORT=0); `url` resolves from its "listening" log line. */
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
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, url, exit, output: () => output };
}

type Outcome = { status: number; id?: string } | { status: 'refused'; error: string };

await forEachStore('graceful shutdown of ledger serve', (kind) => {
  after(() => kind.cleanup());

  test('SIGTERM mid-burst: every 201 is in the database afterwards, and the exit code is 0', async () => {
    const databaseUrl = await kind.freshUrl();
    const setup = openStore(databaseUrl);
    await setup.migrate();
    const created = await new Operators(setup, systemClock).createAgent({ handle: `shutdown-${process.pid}` });
    assert.ok(created.ok);
    const { agent, apiKey } = created.value;
    await setup.close();

    const server = serve({ LEDGER_DATABASE_URL: databaseUrl, LEDGER_WRITE_LIMIT_PER_MIN: '1000000', LEDGER_LOG_LEVEL: 'info' });
    try {
      const base = await server.url;
      const outcomes: Outcome[] = [];
      let sent = 0;
      let terminated = false;
      let terminatedAt = 0;
      const post = async (i: number): Promise<Outcome> => {
        try {
          const res = await fetch(`${base}/v1/decisions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey.secret}`, 'content-type': 'application/json', 'idempotency-key': `shutdown-${process.pid}-${i}` },
            body: JSON.stringify({ symbol: 'AAPL', action: 'BUY', quantity: i }),
          });
          const body = await res.json() as { id?: string };
          return { status: res.status, ...(res.status === 201 ? { id: body.id } : {}) };
        } catch (err) {
          return { status: 'refused', error: (err as Error).message };
        }
      };
      // 16 clients, each posting back to back; SIGTERM once 150 answers are in.
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (sent < 2000) {
          const outcome = await post(sent++);
          outcomes.push(outcome);
          if (!terminated && outcomes.length >= 150) {
            terminated = true;
            terminatedAt = Date.now();
            server.child.kill('SIGTERM');
          }
          if (outcome.status === 'refused' || outcome.status === 503) break;
        }
      }));
      const code = await server.exit;
      assert.equal(code, 0, server.output());
      const shutdownMs = Date.now() - terminatedAt;
      assert.ok(shutdownMs < 10_000, `shut down in ${shutdownMs} ms (keep-alive connections must not hold it open)`);

      const acknowledged = outcomes.flatMap((o) => (o.status === 201 && 'id' in o && o.id ? [o.id] : []));
      assert.ok(acknowledged.length >= 150, `${acknowledged.length} writes acknowledged before shutdown`);
      const unexpected = outcomes.filter((o) => o.status !== 201 && o.status !== 503 && o.status !== 'refused');
      assert.deepEqual(unexpected, [], 'every answer is a 201, a 503 while closing, or a refused connection');
      assert.ok(sent < 2000, 'the server stopped accepting new writes');

      const reopened = openStore(databaseUrl);
      await reopened.migrate();
      try {
        const records = await assertChainVerifies(reopened, { agentId: agent.id, handle: agent.handle });
        const stored = new Set(records.map((r) => r.id));
        for (const id of acknowledged) assert.ok(stored.has(id), `acknowledged ${id} survived the shutdown`);
        assert.ok(records.length >= acknowledged.length);
      } finally {
        await reopened.close();
      }
      assert.ok(!server.output().includes(apiKey.secret), 'the logs never contain an API key');
      assert.match(server.output(), /shutting down/);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});
