// No credential in any error value or thrown message of the broker wing, whatever the broker answers.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { AlpacaClient } from '../../src/brokers/alpaca.ts';
import type { Result } from '../../src/brokers/http.ts';
import { SnapTradeClient } from '../../src/brokers/snaptrade.ts';
import { dayOfFills, startAlpacaSim } from '../sim/alpaca.ts';
import { snapTradeDay, startSnapTradeSim } from '../sim/snaptrade.ts';

const closers: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of closers) await c();
});

/** Runs `f`; returns every error it produced (values and throws) as text. */
async function errorsOf(f: () => Promise<Result<unknown>[]>): Promise<string[]> {
  try {
    const results = await f();
    return results.filter((r) => !r.ok).map((r) => JSON.stringify(r));
  } catch (e) {
    return [`THROWN ${e instanceof Error ? `${e.message} ${e.stack}` : String(e)}`];
  }
}

function assertNoSecret(errors: string[], secrets: string[]): void {
  assert.ok(errors.length > 0, 'the scenario produced errors');
  for (const e of errors) {
    assert.ok(!e.startsWith('THROWN'), e);
    for (const s of secrets) assert.ok(!e.includes(s), `secret in error: ${e}`);
  }
}

async function drain<T>(gen: AsyncGenerator<Result<T>>): Promise<Result<T>[]> {
  const out: Result<T>[] = [];
  for await (const p of gen) out.push(p);
  return out;
}

describe('no credential in errors', () => {
  it('Alpaca: refusals (even ones echoing the key), 429, 5xx, broken answers', async () => {
    const keys = { keyId: 'PKSECRETKEYID00000001', secretKey: 'alpaca-secret-do-not-leak-0123456789' };
    const errors: string[] = [];
    for (const [faults, quirks] of [
      [{ revokeFrom: 1 }, { echoKeyInErrors: true }],
      [{ rateLimitStorm: { from: 1, count: 99, retryAfterS: 1 } }, {}],
      [{ outage: { from: 1, count: 99, status: 502 } }, {}],
    ] as const) {
      const sim = await startAlpacaSim({ scenario: dayOfFills({ keys: [keys], faults, quirks }) });
      closers.push(() => sim.close());
      const c = new AlpacaClient({ credentials: keys, environment: 'live', baseUrl: sim.url, http: { sleep: async () => {} } });
      errors.push(...(await errorsOf(async () => [await c.account(), await c.positions(), ...(await drain(c.fills())), ...(await drain(c.orders()))])));
    }
    const wrong = await startAlpacaSim({ scenario: dayOfFills({ quirks: { echoKeyInErrors: true } }) });
    closers.push(() => wrong.close());
    errors.push(...(await errorsOf(async () => [await new AlpacaClient({ credentials: keys, environment: 'paper', baseUrl: wrong.url }).account()])));
    assert.ok(errors.some((e) => /answered HTTP 40[13] \(the broker refused the credentials\)"/.test(e)), 'the echoing refusal was seen, without its text');
    assertNoSecret(errors, [keys.keyId, keys.secretKey]);
  });

  it('SnapTrade: bad signature, bad user secret (echoed), 429, 5xx', async () => {
    const scenario = snapTradeDay({ faults: { echoSecretsInErrors: true } });
    const sim = await startSnapTradeSim({ scenario });
    closers.push(() => sim.close());
    const partner = scenario.partner;
    const userSecret = 'user-secret-do-not-leak-abcdef';
    const errors: string[] = [];
    const good = new SnapTradeClient({ partner, baseUrl: sim.url, http: { sleep: async () => {} } });
    const reg = await good.registerUser('agt_S');
    assert.ok(reg.ok);
    const user = { userId: 'agt_S', userSecret };
    errors.push(...(await errorsOf(async () => [await good.accounts(user), await good.loginLink(user), ...(await drain(good.activities(user, 'acc')))])));
    const badKey = new SnapTradeClient({ partner: { ...partner, consumerKey: 'wrong-consumer-key-do-not-leak' }, baseUrl: sim.url });
    errors.push(...(await errorsOf(async () => [await badKey.registerUser('agt_T'), await badKey.accounts(reg.value)])));
    for (const faults of [{ rateLimitStorm: { from: 1, count: 99, availableInS: 1 } }, { outage: { from: 1, count: 99, status: 503 } }]) {
      const s = await startSnapTradeSim({ scenario: snapTradeDay({ faults }) });
      closers.push(() => s.close());
      const c = new SnapTradeClient({ partner, baseUrl: s.url, http: { sleep: async () => {} } });
      errors.push(...(await errorsOf(async () => [await c.registerUser('agt_U'), await c.accounts(reg.value)])));
    }
    assert.ok(errors.some((e) => /answered HTTP 40[13] \(the broker refused the credentials\)"/.test(e)), 'the echoing refusal was seen, without its text');
    assertNoSecret(errors, [userSecret, reg.value.userSecret, partner.consumerKey, 'wrong-consumer-key-do-not-leak']);
  });

  it('a broker echoing the credential split, reversed or spaced out: none of its text reaches the error', async () => {
    const keys = { keyId: 'PKECHO0000000000001', secretKey: 'echo-secret-do-not-leak-9876543210' };
    const s = keys.secretKey;
    const echoes = [
      `bad key ${s.slice(0, 17)} ${s.slice(17)}`,
      `bad key ${[...s].reverse().join('')}`,
      `bad key ${[...s].join(' ')}`,
      `bad key ${keys.keyId.slice(0, 10)}-${keys.keyId.slice(10)}`,
    ];
    let n = 0;
    const server = createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 40310000, message: echoes[n++ % echoes.length] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new AlpacaClient({ credentials: keys, environment: 'paper', baseUrl: url, http: { sleep: async () => {} } });
    for (const _ of echoes) {
      const r = await client.account();
      assert.ok(!r.ok);
      assert.match(r.error.message, /^Alpaca GET \/v2\/account answered HTTP 403 \(the broker refused the credentials\)$/);
      assert.equal(r.error.providerCode, '40310000');
      assert.doesNotMatch(JSON.stringify(r), /bad key/);
    }
  });

  it('a connection reset mid-answer is an error value, not a throw', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":"abc","sta');
      setTimeout(() => res.socket?.destroy(), 5);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const keys = { keyId: 'PKRESET000000', secretKey: 'reset-secret-0000000000' };
    const errors = await errorsOf(async () => [await new AlpacaClient({ credentials: keys, environment: 'paper', baseUrl: url, http: { sleep: async () => {} } }).account()]);
    assertNoSecret(errors, [keys.keyId, keys.secretKey]);
    assert.match(errors[0]!, /provider/);
  });
});
