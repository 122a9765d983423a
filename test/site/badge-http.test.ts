// GET /badge/<handle>.svg on the real app, on SQLite and PostgreSQL: each style from the agent's
// real records, the default style, dash and amber, the unknown agent (200, neutral), a bad style
// (400 on `style`), the short cache with ETag and 304, and a badge drawn while Redis is down.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import type { Agent } from '../../src/domain/types.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { COLOURS, DASH, type PerformanceSummary } from '../../src/site/badge.ts';
import { BADGE_MEMO } from '../../src/site/badges.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision, uniqueHandle } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { newKeypair, recordSigned, registerKey } from '../signing/helpers.ts';
import { parseSvg } from './svg.ts';

class Clock {
  constructor(public ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
}

const DAY = 86_400_000;
const START = Date.parse('2026-03-02T15:00:00.000Z');

type Fixture = LedgerApp & { store: LedgerStore; clock: Clock; operators: Operators; performance: Map<string, PerformanceSummary | Error> };

async function fixture(store: LedgerStore, env: Record<string, string> = {}): Promise<Fixture> {
  const clock = new Clock(START);
  const performance = new Map<string, PerformanceSummary | Error>();
  const parts = compose({ store, clock, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:', ...env }), checkSignature: signatureChecker(store) }, {
    performanceSummary: async (agent: Agent) => {
      const p = performance.get(agent.handle);
      if (p instanceof Error) throw p;
      return p ?? null;
    },
  });
  const ledger = await buildApp(parts);
  return { ...ledger, store, clock, operators: new Operators(store, clock), performance };
}

async function agent(f: Fixture, demo = false) {
  const handle = uniqueHandle('badge');
  const created = await f.operators.createAgent({ handle, demo });
  if (!created.ok) throw new Error(created.error.message);
  return { handle, secret: created.value.apiKey.secret, keyId: created.value.apiKey.id, agentId: created.value.agent.id };
}

async function badge(f: Fixture, url: string, headers: Record<string, string> = {}) {
  const res = await f.app.inject({ method: 'GET', url, headers });
  return { res, svg: res.statusCode === 200 ? parseSvg(res.body) : null };
}

/** Past the badge memo, so the next request draws afresh. */
const later = (f: Fixture, ms = BADGE_MEMO.ms + 1) => (f.clock.ms += ms);

await forEachStore('badges over HTTP', (kind) => {
  let f: Fixture;
  before(async () => {
    f = await fixture(await kind.open());
  });
  after(async () => {
    await f?.close();
    await f?.store.close();
    await kind.cleanup();
  });

  test('record (the default style): records and whole days since the first record', async () => {
    const a = await agent(f);
    const empty = await badge(f, `/badge/${a.handle}.svg`);
    assert.equal(empty.res.statusCode, 200);
    assert.equal(empty.svg!.label, `ledger: ${DASH}`, 'no record yet: a dash');
    assert.ok(empty.svg!.fills.includes(COLOURS.lightgrey));
    for (const symbol of ['AAPL', 'MSFT', 'NVDA']) assert.equal((await postDecision(f, a.secret, { symbol, action: 'BUY' })).statusCode, 201);
    later(f, 3 * DAY + 3_600_000);
    const { res, svg } = await badge(f, `/badge/${a.handle}.svg`);
    assert.equal(svg!.label, 'ledger: 3 records · 3 days');
    assert.equal(svg!.title, 'ledger: 3 records · 3 days');
    assert.ok(svg!.fills.includes(COLOURS.blue));
    assert.equal(res.headers['content-type'], 'image/svg+xml; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'public, max-age=300');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    const explicit = await badge(f, `/badge/${a.handle}.svg?style=record`);
    assert.equal(explicit.res.body, res.body, 'style=record is the default');
    const busted = await badge(f, `/badge/${a.handle}.svg?v=2&style=record`);
    assert.equal(busted.res.body, res.body, 'other query parameters are ignored');
  });

  test('verified: the signed share of decisions; a dash for executions while there are none', async () => {
    const a = await agent(f);
    const keys = newKeypair();
    const keyId = await registerKey(f as never, a.secret, keys.publicKey);
    const signed = await recordSigned(f as never, a as never, keys, keyId, { symbol: 'AAPL', action: 'BUY', occurred_at: new Date(f.clock.ms).toISOString() }, `nonce-${a.handle}`);
    assert.equal(signed.statusCode, 201, signed.body);
    assert.equal((await postDecision(f, a.secret, { symbol: 'MSFT', action: 'SELL' })).statusCode, 201);
    assert.equal((await postDecision(f, a.secret, { symbol: 'NVDA', action: 'BUY' })).statusCode, 201);
    const { svg } = await badge(f, `/badge/${a.handle}.svg?style=verified`);
    assert.equal(svg!.label, `verified: linked ${DASH} · signed 33%`);
    assert.ok(svg!.fills.includes(COLOURS.blue));
  });

  test('return: from the performance summary; a dash without one; amber when synthetic; unavailable when it fails', async () => {
    const a = await agent(f);
    const url = `/badge/${a.handle}.svg?style=return`;
    assert.equal((await badge(f, url)).svg!.label, `return: ${DASH}`);
    f.performance.set(a.handle, { cumulative_return: '0.25', benchmark_return: '0.1', benchmark: 'SPY', benchmark_basis: 'total_return', synthetic: false, reason: null });
    later(f);
    const ahead = await badge(f, url);
    assert.equal(ahead.svg!.label, 'return: +25.0% vs SPY total return +10.0%');
    assert.ok(ahead.svg!.fills.includes(COLOURS.brightgreen));
    f.performance.set(a.handle, { cumulative_return: '0.25', benchmark_return: '0.1', benchmark: 'SPY', benchmark_basis: 'price_return', synthetic: true, reason: null });
    later(f);
    const synthetic = await badge(f, url);
    assert.equal(synthetic.svg!.label, 'return: +25.0% vs SPY price return +10.0% · synthetic');
    assert.ok(synthetic.svg!.fills.includes(COLOURS.amber));
    f.performance.set(a.handle, { cumulative_return: null, benchmark_return: null, benchmark: 'SPY', benchmark_basis: 'total_return', synthetic: false, reason: 'no valuation yet' });
    later(f);
    assert.equal((await badge(f, url)).svg!.label, `return: ${DASH}`);
    f.performance.set(a.handle, new Error('performance store down'));
    later(f);
    const failed = await badge(f, url);
    assert.equal(failed.res.statusCode, 200);
    assert.equal(failed.svg!.label, 'return: unavailable', 'a failure is never shown as a dash');
  });

  test('a demo agent\'s badges are amber and say demo', async () => {
    const a = await agent(f, true);
    assert.equal((await postDecision(f, a.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
    for (const [style, label] of [['record', 'ledger: 1 record · 0 days · demo'], ['verified', `verified: linked ${DASH} · signed 0% · demo`], ['return', `return: ${DASH} · demo`]]) {
      const { svg } = await badge(f, `/badge/${a.handle}.svg?style=${style}`);
      assert.equal(svg!.label, label);
      assert.ok(svg!.fills.includes(COLOURS.amber), style);
    }
  });

  test('an unknown or malformed handle gets a neutral 200 badge that says so, for every style', async () => {
    for (const handle of ['no-such-agent', 'UPPER', 'a'.repeat(90), '%E2%80%94']) {
      for (const style of ['', '?style=return', '?style=verified', '?style=record']) {
        const { res, svg } = await badge(f, `/badge/${handle}.svg${style}`);
        assert.equal(res.statusCode, 200, `${handle}${style}: ${res.body.slice(0, 200)}`);
        assert.match(svg!.label, /^(ledger|return|verified): unknown agent$/);
        assert.ok(svg!.fills.includes(COLOURS.lightgrey));
        assert.equal(res.headers['cache-control'], 'public, max-age=60');
      }
    }
    const tooLong = await f.app.inject({ method: 'GET', url: `/badge/${'a'.repeat(300)}.svg` });
    assert.equal(tooLong.statusCode, 400, 'past the router\'s parameter limit: a 400 with the error body, never a 500');
    assert.equal(tooLong.json().error.code, 'invalid_request');
  });

  test('a style outside the three is a 400 on `style`, with the error body', async () => {
    const a = await agent(f);
    for (const style of ['bogus', 'RETURN', '', 'return&style=record']) {
      const res = await f.app.inject({ method: 'GET', url: `/badge/${a.handle}.svg?style=${style}` });
      assert.equal(res.statusCode, 400, `${style}: ${res.body}`);
      const error = res.json().error;
      assert.deepEqual([error.code, error.param], ['invalid_request', 'style']);
      assert.match(error.request_id, /^req_/);
    }
  });

  test('ETag and 304; a new record changes the badge and its ETag once the memo expires', async () => {
    const a = await agent(f);
    assert.equal((await postDecision(f, a.secret, { symbol: 'AAPL', action: 'BUY' }, idempotencyKey())).statusCode, 201);
    later(f);
    const first = await badge(f, `/badge/${a.handle}.svg`);
    const etag = first.res.headers.etag as string;
    assert.match(etag, /^W\/"/);
    const again = await f.app.inject({ method: 'GET', url: `/badge/${a.handle}.svg`, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await postDecision(f, a.secret, { symbol: 'MSFT', action: 'BUY' })).statusCode, 201);
    const memoised = await f.app.inject({ method: 'GET', url: `/badge/${a.handle}.svg`, headers: { 'if-none-match': etag } });
    assert.equal(memoised.statusCode, 304, 'within the memo the badge is the one drawn before');
    later(f);
    const changed = await f.app.inject({ method: 'GET', url: `/badge/${a.handle}.svg`, headers: { 'if-none-match': etag } });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    assert.equal(parseSvg(changed.body).label, 'ledger: 2 records · 0 days');
  });
});

describe('a badge while Redis is down', () => {
  let f: Fixture;
  before(async () => {
    const store = openStore('sqlite::memory:');
    await store.migrate();
    f = await fixture(store, { LEDGER_REDIS_URL: 'redis://127.0.0.1:1' });
  });
  after(async () => {
    await f?.close();
    await f?.store.close();
  });

  test('is drawn as usual: badges use no shared budget', async () => {
    const a = await agent(f);
    assert.equal((await postDecision(f, a.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
    const { res, svg } = await badge(f, `/badge/${a.handle}.svg`);
    assert.equal(res.statusCode, 200);
    assert.equal(svg!.label, 'ledger: 1 record · 0 days');
  });
});
