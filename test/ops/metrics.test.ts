// Prometheus metrics: off unless configured; with LEDGER_METRICS=true, GET /metrics on the
// service's port (hidden from OpenAPI); with LEDGER_METRICS_PORT, only on a listener of their own.
// What the record path, the store, the rate limiter and Redis report, on both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { serveMetrics } from '../../src/api/metrics.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { REDIS_URL, skipUnless } from '../support/services.ts';

const scrape = async (t: TestApp) => {
  const res = await t.app.inject({ url: '/metrics' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return res.body;
};

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('configuration', () => {
  test('off by default; LEDGER_METRICS and LEDGER_METRICS_PORT with clear errors', () => {
    assert.deepEqual(loadConfig({}).metrics, { enabled: false, port: null, host: '127.0.0.1' });
    assert.deepEqual(loadConfig({ LEDGER_METRICS: 'true' }).metrics, { enabled: true, port: null, host: '127.0.0.1' });
    assert.deepEqual(loadConfig({ LEDGER_METRICS_PORT: '9464', LEDGER_METRICS_HOST: '0.0.0.0' }).metrics, { enabled: true, port: 9464, host: '0.0.0.0' });
    assert.throws(() => loadConfig({ LEDGER_METRICS: 'yes' }), (e: Error) => e instanceof ConfigError && /LEDGER_METRICS must be true or false, got "yes"/.test(e.message));
    assert.throws(() => loadConfig({ LEDGER_METRICS_PORT: 'ninety' }), /LEDGER_METRICS_PORT must be an integer from 0 to 65535/);
    assert.throws(() => loadConfig({ LEDGER_METRICS: 'false', LEDGER_METRICS_PORT: '9464' }), /contradict each other/);
    assert.throws(() => loadConfig({ PORT: '8080', LEDGER_METRICS_PORT: '8080' }), /LEDGER_METRICS_PORT must differ from PORT \(8080\)/);
  });
});

await forEachStore('metrics', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_METRICS: 'true' } });
  });
  after(() => closeTestApp(t, kind));

  test('without configuration there is no /metrics', async () => {
    const off = await testApp(store);
    try {
      assert.equal((await off.app.inject({ url: '/metrics' })).statusCode, 404);
      assert.equal(off.metrics, null);
    } finally {
      await off.close();
    }
  });

  test('requests by route and status, latency, commit batches, queue depth, database health and the store', async () => {
    const agent = await t.agent();
    const key = `metrics-${Date.now()}`;
    for (let i = 0; i < 3; i++) assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: i + 1 })).statusCode, 201);
    assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'SELL' }, key)).statusCode, 201);
    assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'SELL' }, key)).headers['idempotent-replayed'], 'true');
    assert.equal((await t.app.inject({ url: `/v1/agents/${agent.handle}` })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/v1/no/such/route' })).statusCode, 404);
    const text = await scrape(t);

    assert.equal(sample(text, 'ledger_http_requests_total{route="/v1/decisions",method="POST",status="201"}'), 5);
    assert.equal(sample(text, 'ledger_http_requests_total{route="/v1/agents/:handle",method="GET",status="200"}'), 1);
    assert.equal(sample(text, 'ledger_http_requests_total{route="unmatched",method="GET",status="404"}'), 1, 'unknown paths share one label');
    assert.equal(sample(text, 'ledger_http_request_duration_seconds_count{route="/v1/decisions",method="POST",status="201"}'), 5);
    assert.equal(sample(text, 'ledger_http_request_duration_seconds_bucket{le="+Inf",route="/v1/decisions",method="POST",status="201"}'), 5);
    assert.equal(sample(text, 'ledger_commit_batch_requests_sum'), 5, 'five requests reached the commit queue (the replay finds its key there)');
    assert.ok(sample(text, 'ledger_commit_batch_requests_count')! >= 1);
    assert.ok(sample(text, 'ledger_commit_duration_seconds_sum')! > 0);
    assert.equal(sample(text, 'ledger_commit_queue_depth{state="waiting"}'), 0);
    assert.equal(sample(text, 'ledger_commit_queue_depth{state="in_flight"}'), 0);
    assert.equal(sample(text, 'ledger_commit_failures_total'), 0);
    assert.equal(sample(text, 'ledger_database_up'), 1);
    assert.ok(sample(text, 'ledger_process_resident_memory_bytes')! > 0, 'process metrics are there');
    assert.equal(sample(text, 'ledger_redis_up'), undefined, 'no Redis configured: no Redis series');
    if (kind.name === 'postgres') {
      assert.ok(sample(text, 'ledger_postgres_pool_connections{state="total"}')! >= 1);
      assert.equal(sample(text, 'ledger_postgres_pool_connections{state="waiting"}'), 0);
      assert.equal(sample(text, 'ledger_sqlite_wal_bytes'), undefined);
    } else {
      assert.ok(sample(text, 'ledger_sqlite_wal_fsyncs_total')! >= 1);
      assert.ok(sample(text, 'ledger_sqlite_wal_fsync_seconds_total')! > 0);
      assert.ok(sample(text, 'ledger_sqlite_wal_bytes')! > 0);
      assert.equal(sample(text, 'ledger_postgres_pool_connections{state="total"}'), undefined);
    }
    const openapi = (await t.app.inject({ url: '/v1/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.equal(openapi.paths['/metrics'], undefined, 'an operator endpoint, not in the public API description');
  });

  test('with LEDGER_METRICS_PORT, /metrics is only on its own listener', async () => {
    const separate = await testApp(store, { env: { LEDGER_METRICS_PORT: '0' } });
    const listener = await serveMetrics(separate.metrics!, '127.0.0.1', 0);
    try {
      assert.equal((await separate.app.inject({ url: '/metrics' })).statusCode, 404, 'not on the public port');
      const res = await fetch(listener.url);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^# HELP ledger_http_requests_total/m);
      assert.equal((await fetch(listener.url.replace('/metrics', '/v1/ledger'))).status, 404);
    } finally {
      await listener.close();
      await separate.close();
    }
  });
});

const redisSkip = await skipUnless('redis');

describe('Redis health and rate-limit fallbacks', () => {
  test('Redis unreachable: redis_up 0, budgets per process, one fallback counted', async () => {
    const { openStore } = await import('../../src/store/open.ts');
    const store = openStore('sqlite::memory:');
    await store.migrate();
    const t = await testApp(store, { env: { LEDGER_METRICS: 'true', LEDGER_REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const agent = await t.agent();
      assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
      const text = await scrape(t);
      assert.equal(sample(text, 'ledger_redis_up'), 0);
      assert.equal(sample(text, 'ledger_rate_limit_shared'), 0);
      assert.equal(sample(text, 'ledger_rate_limit_fallbacks_total'), 1);
    } finally {
      await t.close();
      await store.close();
    }
  });

  test('Redis up: redis_up 1, budgets shared', { skip: redisSkip }, async () => {
    const { openStore } = await import('../../src/store/open.ts');
    const store = openStore('sqlite::memory:');
    await store.migrate();
    const t = await testApp(store, { env: { LEDGER_METRICS: 'true', LEDGER_REDIS_URL: REDIS_URL } });
    try {
      const text = await scrape(t);
      assert.equal(sample(text, 'ledger_redis_up'), 1);
      assert.equal(sample(text, 'ledger_rate_limit_shared'), 1);
      assert.equal(sample(text, 'ledger_rate_limit_fallbacks_total'), 0);
    } finally {
      await t.close();
      await store.close();
    }
  });
});
