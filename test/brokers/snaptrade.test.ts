// The SnapTrade client against the SnapTrade simulator: signing, the connection flow, paging,
// retries, errors, and that nothing it sends can change brokerage state.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { HttpPolicy } from '../../src/brokers/http.ts';
import { SnapTradeClient, snapTradeSignature, type SnapTradeActivity, type SnapTradeUser } from '../../src/brokers/snaptrade.ts';
import { snapTradeBulk, snapTradeDay, startSnapTradeSim, type SnapTradeScenario, type SnapTradeSim } from '../sim/snaptrade.ts';

const sims: SnapTradeSim[] = [];
after(async () => {
  for (const s of sims) await s.close();
});

async function sim(scenario: SnapTradeScenario = snapTradeDay()): Promise<SnapTradeSim> {
  const s = await startSnapTradeSim({ scenario });
  sims.push(s);
  return s;
}

function client(s: SnapTradeSim, options: { http?: Partial<HttpPolicy>; baseUrl?: string; consumerKey?: string } = {}): SnapTradeClient {
  return new SnapTradeClient({
    partner: { clientId: s.scenario.partner.clientId, consumerKey: options.consumerKey ?? s.scenario.partner.consumerKey },
    baseUrl: options.baseUrl ?? s.url,
    http: { sleep: async () => {}, ...options.http },
  });
}

/** Registers a user and completes the portal as the owner would; returns the user and account ids. */
async function connect(s: SnapTradeSim, c: SnapTradeClient, userId = 'agt_01TEST'): Promise<{ user: SnapTradeUser; accounts: string[] }> {
  const reg = await c.registerUser(userId);
  assert.ok(reg.ok, JSON.stringify(!reg.ok && reg.error));
  const link = await c.loginLink(reg.value, { customRedirect: 'http://127.0.0.1:1/brokers/snaptrade/callback?state=abc' });
  assert.ok(link.ok);
  const res = await fetch(link.value.redirectURI, { redirect: 'manual' });
  assert.equal(res.status, 302);
  const back = new URL(res.headers.get('location')!);
  assert.equal(back.searchParams.get('status'), 'SUCCESS');
  assert.equal(back.searchParams.get('state'), 'abc');
  const accounts = await c.accounts(reg.value);
  assert.ok(accounts.ok);
  return { user: reg.value, accounts: accounts.value.map((a) => a.id) };
}

async function allActivities(c: SnapTradeClient, user: SnapTradeUser, accountId: string, limit?: number): Promise<SnapTradeActivity[]> {
  const out: SnapTradeActivity[] = [];
  for await (const page of c.activities(user, accountId, limit ? { limit } : {})) {
    assert.ok(page.ok, JSON.stringify(!page.ok && page.error));
    out.push(...page.value.activities);
  }
  return out;
}

function assertNothingChangedState(s: SnapTradeSim): void {
  const api = s.requests.filter((r) => !r.portal);
  assert.ok(api.length > 0);
  for (const r of api) {
    assert.equal(r.stateChanging, false, `${r.method} ${r.path}`);
    if (r.method !== 'GET') {
      assert.equal(r.method, 'POST');
      assert.match(r.path, /^(\/api\/v1)?\/snapTrade\/(registerUser|login)$/);
    }
  }
  for (const r of api.filter((x) => x.path.endsWith('/snapTrade/login'))) {
    assert.equal((r.body as { connectionType?: string }).connectionType, 'read');
  }
}

describe('SnapTrade signing (brokers.md §3.2 vectors)', () => {
  const key = 'example-consumer-key';
  const q = 'clientId=EXAMPLECLIENT&userId=user-123&userSecret=secret-abc&timestamp=1700000000';
  it('row 1: no body, root path', () => {
    assert.equal(snapTradeSignature(key, { content: null, path: '/accounts', query: q }), 'HZp9TQwppUUPpDA3hg5qZVInv8Z/axrN6rAUavtndiA=');
  });
  it('row 2: a JSON body', () => {
    assert.equal(
      snapTradeSignature(key, { content: { userId: 'user-123' }, path: '/snapTrade/registerUser', query: 'clientId=EXAMPLECLIENT&timestamp=1700000000' }),
      'Kxe1GK9RsmvjNDLwj/Jn8ysOVPL52kJM/+13gmKvZxc=',
    );
  });
  it('row 3: the legacy /api/v1 prefix is part of the signed path', () => {
    assert.equal(snapTradeSignature(key, { content: null, path: '/api/v1/accounts', query: q }), 'OGujA7as34W8sKWhdS+lXLQomCEOicAPXYtpiacFMFo=');
  });
  it('an empty object body signs as null', () => {
    assert.equal(snapTradeSignature(key, { content: {}, path: '/accounts', query: q }), snapTradeSignature(key, { content: null, path: '/accounts', query: q }));
  });
});

describe('SnapTrade client: connection flow and reads', () => {
  it('registers, links read-only, completes the portal, lists connections and accounts', async () => {
    const s = await sim();
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    assert.equal(accounts.length, 2);
    const auths = await c.authorizations(user);
    assert.ok(auths.ok);
    assert.equal(auths.value.length, 1);
    assert.equal(auths.value[0]!.type, 'read');
    assert.equal(auths.value[0]!.disabled, false);
    assertNothingChangedState(s);
  });

  it('reads activities with numbers kept as their exact text', async () => {
    const s = await sim();
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    const rows = await allActivities(c, user, accounts[0]!);
    assert.equal(rows.length, 9, 'the lagged row is not visible yet');
    const spy = rows.find((r) => r.symbol?.symbol === 'SPY' && r.type === 'BUY')!;
    assert.equal(spy.price, '561.2');
    assert.equal(spy.units, '2');
    s.advanceDay();
    assert.equal((await allActivities(c, user, accounts[0]!)).length, 10, 'SnapTrade lag: the row appears a day later');
  });

  it('pages through every activity once (offset paging)', async () => {
    const s = await sim(snapTradeBulk(2500));
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    for (const limit of [1000, 333]) {
      const rows = await allActivities(c, user, accounts[0]!, limit);
      assert.equal(rows.length, 2500);
      assert.equal(new Set(rows.map((r) => r.id)).size, 2500);
    }
    assertNothingChangedState(s);
  });

  it('reads orders, and a brokerage without an orders API is {supported: false}', async () => {
    const s = await sim();
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    const withOrders = await c.orders(user, accounts[0]!);
    assert.ok(withOrders.ok);
    assert.equal(withOrders.value.supported, true);
    assert.ok(withOrders.value.orders.length > 0);
    const none = await c.orders(user, accounts[1]!);
    assert.ok(none.ok);
    assert.deepEqual(none.value, { supported: false, orders: [] });
    const days = s.requests.filter((r) => r.path.endsWith('/orders')).map((r) => new URLSearchParams(r.query).get('days'));
    assert.ok(days.every((d) => d === '90'));
  });

  it('reads positions and balances', async () => {
    const s = await sim();
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    const p = await c.positions(user, accounts[0]!);
    assert.ok(p.ok);
    assert.ok(p.value.results.length > 0);
    const b = await c.balances(user, accounts[0]!);
    assert.ok(b.ok);
    assert.equal(b.value[0]!.cash, '1234.56');
  });

  it('works under the legacy /api/v1 base, signing the path as sent', async () => {
    const s = await sim();
    const c = client(s, { baseUrl: `${s.url}/api/v1` });
    const { user, accounts } = await connect(s, c);
    assert.ok((await allActivities(c, user, accounts[0]!)).length > 0);
    assert.ok(s.requests.filter((r) => !r.portal).every((r) => r.path.startsWith('/api/v1/')));
  });

  it('exposes no method that could trade', () => {
    const methods = Object.getOwnPropertyNames(SnapTradeClient.prototype).sort();
    assert.deepEqual(methods, ['accounts', 'activities', 'authorizations', 'balances', 'constructor', 'loginLink', 'orders', 'positions', 'registerUser']);
  });
});

describe('SnapTrade client: errors', () => {
  it('a wrong consumer key is kind auth with code 1076', async () => {
    const s = await sim();
    const r = await client(s, { consumerKey: 'not-the-consumer-key-at-all' }).registerUser('agt_X');
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'auth');
    assert.equal(r.error.providerCode, '1076');
  });

  it('a wrong user secret is kind auth with code 1083', async () => {
    const s = await sim();
    const c = client(s);
    const { user } = await connect(s, c);
    const r = await c.accounts({ userId: user.userId, userSecret: 'wrong-secret-0000' });
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'auth');
    assert.equal(r.error.providerCode, '1083');
  });

  it('429 waits the seconds SnapTrade names in X-RateLimit-Reset', async () => {
    const s = await sim(snapTradeDay({ faults: { rateLimitStorm: { from: 1, count: 2, availableInS: 7 } } }));
    const slept: number[] = [];
    const r = await client(s, { http: { sleep: async (ms) => void slept.push(ms) } }).registerUser('agt_Y');
    assert.ok(r.ok);
    assert.deepEqual(slept, [7000, 7000]);
  });

  it('a 5xx outage longer than the retries is kind provider; nothing was half-read', async () => {
    const s = await sim(snapTradeDay({ faults: { outage: { from: 3, count: 20, status: 500 } } }));
    const c = client(s);
    const reg = await c.registerUser('agt_Z');
    assert.ok(reg.ok);
    const r = await c.accounts(reg.value);
    assert.ok(r.ok);
    const pages = [];
    for await (const p of c.activities(reg.value, 'any')) pages.push(p);
    assert.equal(pages.length, 1);
    assert.ok(!pages[0]!.ok && pages[0]!.error.kind === 'provider' && pages[0]!.error.status === 500);
  });

  it('a connection that loses authorisation mid-read stops with kind auth', async () => {
    const s = await sim(snapTradeBulk(3000));
    const c = client(s);
    const { user, accounts } = await connect(s, c);
    s.scenario.faults.revokeFrom = s.requests.length + 2;
    const ok: number[] = [];
    let error = null;
    for await (const p of c.activities(user, accounts[0]!)) {
      if (p.ok) ok.push(p.value.activities.length);
      else error = p.error;
    }
    assert.deepEqual(ok, [1000]);
    assert.equal(error?.kind, 'auth');
    const auths = await c.authorizations(user);
    assert.ok(!auths.ok);
  });
});

describe('SnapTrade client: account-management POSTs are not blindly retried', () => {
  it('registerUser is sent once on a 5xx (the user may exist now), but again after a 429', async () => {
    const down = await sim(snapTradeDay({ faults: { outage: { from: 1, count: 1, status: 500 } } }));
    const r = await client(down).registerUser('agt_once');
    assert.ok(!r.ok && r.error.kind === 'provider');
    assert.equal(down.requests.length, 1);
    const busy = await sim(snapTradeDay({ faults: { rateLimitStorm: { from: 1, count: 1, availableInS: 1 } } }));
    assert.ok((await client(busy).registerUser('agt_twice')).ok);
    assert.equal(busy.requests.length, 2);
  });
});

describe('activityWindow', () => {
  it('re-reads a trailing week, whole dates; everything on the first sync', async () => {
    const { activityWindow } = await import('../../src/brokers/snaptrade.ts');
    assert.deepEqual(activityWindow({ lastSyncedDate: null, today: '2026-03-13' }), { endDate: '2026-03-13' });
    assert.deepEqual(activityWindow({ lastSyncedDate: '2026-03-03', today: '2026-03-13' }), { startDate: '2026-02-24', endDate: '2026-03-13' });
    assert.deepEqual(activityWindow({ lastSyncedDate: 'garbage', today: '2026-03-13' }), { endDate: '2026-03-13' });
  });
});
