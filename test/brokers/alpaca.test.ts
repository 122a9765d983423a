// The Alpaca client against the Alpaca simulator: paging traps, retries, errors, read-only.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { AlpacaClient, alpacaTimestamp, checkAlpacaCredentials, type AlpacaFillActivity, type AlpacaOrder } from '../../src/brokers/alpaca.ts';
import type { BrokerError, HttpPolicy, Result } from '../../src/brokers/http.ts';
import { dayOfFills, startAlpacaSim, type AlpacaScenario, type AlpacaSim } from '../sim/alpaca.ts';

const sims: AlpacaSim[] = [];
after(async () => {
  for (const s of sims) await s.close();
});

async function sim(overrides: Partial<AlpacaScenario> = {}): Promise<AlpacaSim> {
  const s = await startAlpacaSim({ scenario: dayOfFills(overrides) });
  sims.push(s);
  return s;
}

function client(s: AlpacaSim, http: Partial<HttpPolicy> = {}, keys = s.scenario.keys[0]!): AlpacaClient {
  return new AlpacaClient({
    credentials: { keyId: keys.keyId, secretKey: keys.secretKey },
    environment: 'paper',
    baseUrl: s.url,
    http: { sleep: async () => {}, ...http },
  });
}

async function collect<T, P>(gen: AsyncGenerator<Result<P>>, pick: (p: P) => T[]): Promise<{ rows: T[]; error: BrokerError | null; pages: P[] }> {
  const rows: T[] = [];
  const pages: P[] = [];
  for await (const page of gen) {
    if (!page.ok) return { rows, error: page.error, pages };
    pages.push(page.value);
    rows.push(...pick(page.value));
  }
  return { rows, error: null, pages };
}

const READ_PATHS = /^\/v2\/(account|positions|orders|orders\/[0-9a-f-]+|account\/activities\/FILL)$/;

function assertOnlyReads(s: AlpacaSim): void {
  assert.ok(s.requests.length > 0);
  for (const r of s.requests) {
    assert.equal(r.method, 'GET', `request ${r.n} ${r.method} ${r.path}`);
    assert.equal(r.stateChanging, false);
    assert.match(r.path, READ_PATHS);
  }
}

describe('Alpaca client: account and credentials', () => {
  it('reads the account with valid keys', async () => {
    const s = await sim();
    const r = await client(s).account();
    assert.ok(r.ok);
    assert.equal(r.value.id, s.scenario.account.id);
    assert.equal(r.value.status, 'ACTIVE');
    assertOnlyReads(s);
  });

  it('a refusal by Alpaca is kind auth (invalid credentials), without retrying', async () => {
    const s = await sim();
    const r = await client(s, {}, { keyId: 'PKWRONG', secretKey: 'wrong-secret-value' }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'auth');
    assert.equal(r.error.status, 401);
    assert.equal(r.error.providerCode, '40110000');
    assert.equal(s.requests.length, 1);
  });

  it('5xx past the retries is kind provider; a shorter outage is ridden out', async () => {
    const down = await sim({ faults: { outage: { from: 1, count: 10, status: 503 } } });
    const r = await client(down).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'provider');
    assert.equal(r.error.status, 503);
    assert.equal(down.requests.length, 4);

    const blip = await sim({ faults: { outage: { from: 1, count: 2, status: 504 } } });
    const ok = await client(blip).account();
    assert.ok(ok.ok);
    assert.equal(blip.requests.length, 3);
  });

  it('unreachable is kind provider', async () => {
    const s = await sim();
    const url = s.url;
    await s.close();
    sims.splice(sims.indexOf(s), 1);
    const r = await new AlpacaClient({ credentials: { keyId: 'PKX', secretKey: 'sssssssss' }, environment: 'live', baseUrl: url, http: { sleep: async () => {} } }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'provider');
  });

  it('uses the paper and live hosts unless a base URL overrides them', () => {
    const creds = { keyId: 'k', secretKey: 's' };
    assert.equal(new AlpacaClient({ credentials: creds, environment: 'paper' }).baseUrl, 'https://paper-api.alpaca.markets');
    assert.equal(new AlpacaClient({ credentials: creds, environment: 'live' }).baseUrl, 'https://api.alpaca.markets');
    assert.equal(new AlpacaClient({ credentials: creds, environment: 'live', baseUrl: 'http://127.0.0.1:9/' }).baseUrl, 'http://127.0.0.1:9');
  });
});

describe('Alpaca credential check (POST /v1/brokers/alpaca)', () => {
  it('valid keys answer the account without its number', async () => {
    const s = await sim();
    const k = s.scenario.keys[0]!;
    const r = await checkAlpacaCredentials({ credentials: k, environment: 'paper', baseUrl: s.url });
    assert.deepEqual(r, { ok: true, account: { id: s.scenario.account.id, status: 'ACTIVE', currency: 'USD' } });
  });
  it('a refusal is invalid_credentials naming api_key_id; an outage is provider_error', async () => {
    const s = await sim();
    const r = await checkAlpacaCredentials({ credentials: { keyId: 'PKNOPE', secretKey: 'nope-nope-nope' }, environment: 'paper', baseUrl: s.url });
    assert.ok(!r.ok && r.reason === 'invalid_credentials' && r.param === 'api_key_id');
    const down = await sim({ faults: { outage: { from: 1, count: 99, status: 500 } } });
    const d = await checkAlpacaCredentials({ credentials: down.scenario.keys[0]!, environment: 'paper', baseUrl: down.url, http: { sleep: async () => {} } });
    assert.ok(!d.ok && d.reason === 'provider_error');
    const gone = await checkAlpacaCredentials({ credentials: down.scenario.keys[0]!, environment: 'paper', baseUrl: 'http://127.0.0.1:1', http: { sleep: async () => {} } });
    assert.ok(!gone.ok && gone.reason === 'provider_error');
  });
});

describe('Alpaca client: read-only by construction', () => {
  it('has no method that could write', () => {
    assert.deepEqual(Object.getOwnPropertyNames(AlpacaClient.prototype).sort(), ['account', 'constructor', 'fills', 'nonTradeActivities', 'order', 'orders', 'positions']);
  });
  it('its source names no method but GET', () => {
    const src = readFileSync(new URL('../../src/brokers/alpaca.ts', import.meta.url), 'utf8');
    assert.equal(src.match(/method: '([A-Z]+)'/g)?.join(), "method: 'GET'");
    assert.doesNotMatch(src, /'(POST|PUT|PATCH|DELETE)'/);
  });
});

describe('Alpaca client: 429', () => {
  it('honours Retry-After, then succeeds', async () => {
    const s = await sim({ faults: { rateLimitStorm: { from: 1, count: 3, retryAfterS: 2 } } });
    const slept: number[] = [];
    const r = await client(s, { sleep: async (ms) => void slept.push(ms) }).account();
    assert.ok(r.ok);
    assert.deepEqual(slept, [2000, 2000, 2000]);
    assert.equal(s.requests.length, 4);
  });

  it('without Retry-After waits for X-Ratelimit-Reset', async () => {
    const s = await sim({ faults: { rateLimitStorm: { from: 1, count: 1 } } });
    const slept: number[] = [];
    const r = await client(s, { sleep: async (ms) => void slept.push(ms) }).account();
    assert.ok(r.ok);
    assert.equal(slept.length, 1);
    assert.ok(slept[0]! >= 0 && slept[0]! <= 1000, `slept ${slept[0]}`);
  });

  it('a storm longer than the retries is kind rate_limited with the wait asked for', async () => {
    const s = await sim({ faults: { rateLimitStorm: { from: 1, count: 50, retryAfterS: 1 } } });
    const r = await client(s).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'rate_limited');
    assert.equal(r.error.retryAfterMs, 1000);
  });

  it('a wait longer than the policy allows is returned, not slept', async () => {
    const s = await sim({ faults: { rateLimitStorm: { from: 1, count: 5, retryAfterS: 600 } } });
    const slept: number[] = [];
    const r = await client(s, { sleep: async (ms) => void slept.push(ms) }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'rate_limited');
    assert.equal(r.error.retryAfterMs, 600_000);
    assert.deepEqual(slept, []);
  });
});

describe('Alpaca client: fills paging', () => {
  for (const prefixPaging of [false, true]) {
    for (const pageSize of [100, 10, 7, 3]) {
      it(`reads every fill exactly once (page_size ${pageSize}${prefixPaging ? ', millisecond-prefix paging quirk' : ''})`, async () => {
        const s = await sim({ quirks: { prefixPaging } });
        const { rows, error } = await collect(client(s).fills({ pageSize }), (p) => p.fills);
        assert.equal(error, null);
        const ids = rows.map((f) => f.id);
        assert.equal(new Set(ids).size, ids.length, 'no fill twice');
        assert.deepEqual([...ids].sort(), s.scenario.fills.map((f) => f.id).sort());
        assertOnlyReads(s);
      });
    }
  }

  it('the quirk is real: naive paging on the last id loses rows at equal timestamps', async () => {
    const s = await sim({ quirks: { prefixPaging: true } });
    const seen: string[] = [];
    let token: string | undefined;
    for (;;) {
      const res = await fetch(`${s.url}/v2/account/activities/FILL?direction=asc&page_size=100${token ? `&page_token=${token}` : ''}`, {
        headers: { 'APCA-API-KEY-ID': s.scenario.keys[0]!.keyId, 'APCA-API-SECRET-KEY': s.scenario.keys[0]!.secretKey },
      });
      const page = (await res.json()) as AlpacaFillActivity[];
      seen.push(...page.map((f) => f.id));
      if (page.length < 100) break;
      token = page[page.length - 1]!.id;
    }
    assert.ok(seen.length < s.scenario.fills.length, `naive paging saw ${seen.length} of ${s.scenario.fills.length}`);
  });

  it('resumes from the token of an earlier sync without losing the rows after it', async () => {
    const s = await sim({ quirks: { prefixPaging: true } });
    const first = await collect(client(s).fills({ pageSize: 10 }), (p) => p.fills);
    const cut = first.pages[4]!.resumeToken!;
    const resumed = await collect(client(s).fills({ pageSize: 10, pageToken: cut }), (p) => p.fills);
    const before = new Set(first.rows.filter((f) => f.id <= cut).map((f) => f.id));
    const union = new Set([...before, ...resumed.rows.map((f) => f.id)]);
    assert.equal(union.size, s.scenario.fills.length);
  });
});

describe('Alpaca client: orders paging', () => {
  for (const limit of [500, 5, 3, 2]) {
    it(`reads every order once, legs nested under their parent (limit ${limit})`, async () => {
      const s = await sim();
      const { rows, error } = await collect(client(s).orders({ limit }), (p) => p.orders);
      assert.equal(error, null);
      const ids = rows.map((o) => o.id);
      assert.equal(new Set(ids).size, ids.length);
      const topLevel = s.scenario.orders.filter((o) => o.parent === null);
      assert.deepEqual([...ids].sort(), topLevel.map((o) => o.id).sort());
      const bracket = rows.find((o) => o.order_class === 'bracket') as AlpacaOrder;
      assert.equal(bracket.legs?.length, 2);
      for (const r of s.requests.filter((x) => x.path === '/v2/orders')) {
        const q = new URLSearchParams(r.query);
        assert.equal(q.get('status'), 'all');
        assert.equal(q.get('nested'), 'true');
        assert.equal(q.get('direction'), 'asc');
        if (q.has('after')) assert.match(q.get('after')!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      }
      assertOnlyReads(s);
    });
  }

  it('formats after as YYYY-MM-DDTHH:MM:SSZ', () => {
    assert.equal(alpacaTimestamp(Date.parse('2026-03-13T14:31:02.918Z')), '2026-03-13T14:31:02Z');
  });

  it('reads one order by id with its replacement links', async () => {
    const s = await sim();
    const replacement = s.scenario.orders.find((o) => o.replaces !== null)!;
    const r = await client(s).order(replacement.id);
    assert.ok(r.ok);
    assert.equal(r.value.replaces, replacement.replaces);
    const missing = await client(s).order('00000000-0000-4000-8000-000000000000');
    assert.ok(!missing.ok);
    assert.equal(missing.error.kind, 'not_found');
  });

  it('reads positions', async () => {
    const s = await sim();
    const r = await client(s).positions();
    assert.ok(r.ok);
    assert.ok(r.value.some((p) => p.symbol === 'AAPL' && p.qty === '10'));
  });
});

describe('Alpaca client: connection that loses authorisation mid-sync', () => {
  it('stops with kind auth on the first refused page', async () => {
    const s = await sim({ faults: { revokeFrom: 3 } });
    const { rows, error } = await collect(client(s).fills({ pageSize: 10 }), (p) => p.fills);
    assert.ok(rows.length >= 10 && rows.length < s.scenario.fills.length, `read ${rows.length} before the refusal`);
    assert.equal(error?.kind, 'auth');
    assert.equal(s.requests.length, 3, 'a refusal is not retried');
  });
});

describe('Alpaca client: transport limits', () => {
  async function rawServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => {
      server.closeAllConnections();
      server.close();
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const creds = { keyId: 'PKTRANSPORT', secretKey: 'transport-secret-123456' };

  it('times out a silent server (kind provider)', async () => {
    const url = await rawServer(() => {});
    const r = await new AlpacaClient({ credentials: creds, environment: 'paper', baseUrl: url, http: { timeoutMs: 50, sleep: async () => {} } }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'provider');
    assert.match(r.error.message, /no answer within 50 ms/);
  });

  it('refuses an answer over the size limit', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', status: 'ACTIVE', pad: 'x'.repeat(5000) }));
    });
    const r = await new AlpacaClient({ credentials: creds, environment: 'paper', baseUrl: url, http: { maxResponseBytes: 1000 } }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'provider');
  });

  it('does not follow a redirect (it would carry the key headers elsewhere)', async () => {
    let hits = 0;
    const target = await rawServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    const url = await rawServer((_req, res) => {
      res.writeHead(302, { location: `${target}/v2/account` });
      res.end();
    });
    const r = await new AlpacaClient({ credentials: creds, environment: 'paper', baseUrl: url }).account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'provider');
    assert.equal(hits, 0);
  });
});
