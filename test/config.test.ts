// Configuration by environment (issue scope 4): defaults, derived URLs, and a ConfigError naming
// the variable for every bad value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

test('defaults', () => {
  const c = loadConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.databaseUrl, 'sqlite:./data/ledger.db');
  assert.equal(c.adminToken, null);
  assert.equal(c.baseUrl, 'http://localhost:8080/v1');
  assert.equal(c.siteUrl, 'http://localhost:8080');
  assert.equal(c.redisUrl, null);
  assert.equal(c.writeLimitPerMinute, 120);
});

test('the URLs follow PORT unless set; a trailing slash is dropped', () => {
  const c = loadConfig({ PORT: '9000' });
  assert.equal(c.port, 9000);
  assert.equal(c.baseUrl, 'http://localhost:9000/v1');
  assert.equal(c.siteUrl, 'http://localhost:9000');
  const d = loadConfig({ PORT: '9000', LEDGER_BASE_URL: 'https://ledger.example.com/v1/', LEDGER_SITE_URL: 'https://ledger.example.com/' });
  assert.equal(d.baseUrl, 'https://ledger.example.com/v1');
  assert.equal(d.siteUrl, 'https://ledger.example.com');
});

test('every variable is read', () => {
  const c = loadConfig({
    PORT: '0', HOST: '0.0.0.0', LEDGER_DATABASE_URL: 'postgres://u@db:5432/ledger', LEDGER_ADMIN_TOKEN: 'a'.repeat(16),
    LEDGER_REDIS_URL: 'redis://cache:6379/', LEDGER_WRITE_LIMIT_PER_MIN: '7',
  });
  assert.equal(c.port, 0);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.databaseUrl, 'postgres://u@db:5432/ledger');
  assert.equal(c.adminToken, 'a'.repeat(16));
  assert.equal(c.redisUrl, 'redis://cache:6379');
  assert.equal(c.writeLimitPerMinute, 7);
  assert.equal(loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:');
  assert.equal(loadConfig({ LEDGER_DATABASE_URL: 'postgresql://h/db' }).databaseUrl, 'postgresql://h/db');
  assert.equal(loadConfig({ LEDGER_REDIS_URL: 'rediss://cache:6380' }).redisUrl, 'rediss://cache:6380');
});

test('read threads: one of 256 MiB by default, none on request (docs/operations.md, "Bounds on public reads")', () => {
  assert.deepEqual([loadConfig({}).readBounds.threads, loadConfig({}).readBounds.threadHeapMb], [1, 256]);
  const c = loadConfig({ LEDGER_READ_THREADS: '0', LEDGER_READ_THREAD_HEAP_MB: '512' });
  assert.deepEqual([c.readBounds.threads, c.readBounds.threadHeapMb], [0, 512]);
});

test('empty values mean unset', () => {
  const c = loadConfig({ PORT: '', LEDGER_ADMIN_TOKEN: '', LEDGER_REDIS_URL: '', LEDGER_WRITE_LIMIT_PER_MIN: '' });
  assert.equal(c.port, 8080);
  assert.equal(c.adminToken, null);
  assert.equal(c.redisUrl, null);
  assert.equal(c.writeLimitPerMinute, 120);
});

const bad: [Record<string, string>, RegExp][] = [
  [{ PORT: 'abc' }, /^PORT /],
  [{ PORT: '-1' }, /^PORT /],
  [{ PORT: '65536' }, /^PORT /],
  [{ PORT: '80.5' }, /^PORT /],
  [{ PORT: ' 80' }, /^PORT /],
  [{ LEDGER_DATABASE_URL: 'mysql://x' }, /^LEDGER_DATABASE_URL /],
  [{ LEDGER_DATABASE_URL: 'sqlite:' }, /^LEDGER_DATABASE_URL /],
  [{ LEDGER_DATABASE_URL: './ledger.db' }, /^LEDGER_DATABASE_URL /],
  [{ LEDGER_ADMIN_TOKEN: 'fifteen-chars!!' }, /^LEDGER_ADMIN_TOKEN /],
  [{ LEDGER_BASE_URL: 'not a url' }, /^LEDGER_BASE_URL /],
  [{ LEDGER_BASE_URL: 'ftp://x/v1' }, /^LEDGER_BASE_URL /],
  [{ LEDGER_SITE_URL: 'javascript:alert(1)' }, /^LEDGER_SITE_URL /],
  [{ LEDGER_REDIS_URL: 'http://127.0.0.1:6379' }, /^LEDGER_REDIS_URL /],
  [{ LEDGER_WRITE_LIMIT_PER_MIN: '0' }, /^LEDGER_WRITE_LIMIT_PER_MIN /],
  [{ LEDGER_WRITE_LIMIT_PER_MIN: 'ten' }, /^LEDGER_WRITE_LIMIT_PER_MIN /],
  [{ LEDGER_WRITE_LIMIT_PER_MIN: '1e3' }, /^LEDGER_WRITE_LIMIT_PER_MIN /],
  [{ LEDGER_READ_THREADS: '-1' }, /^LEDGER_READ_THREADS /],
  [{ LEDGER_READ_THREADS: '65' }, /^LEDGER_READ_THREADS /],
  [{ LEDGER_READ_THREAD_HEAP_MB: '63' }, /^LEDGER_READ_THREAD_HEAP_MB /],
  [{ LEDGER_READ_THREAD_HEAP_MB: 'lots' }, /^LEDGER_READ_THREAD_HEAP_MB /],
  [{ LEDGER_SNAPTRADE_CONSUMER_KEY: 'consumer key' }, /^LEDGER_SNAPTRADE_CONSUMER_KEY must be at most 256 printable ASCII characters without spaces/],
  [{ LEDGER_SNAPTRADE_CLIENT_ID: 'CLIENT\n' }, /^LEDGER_SNAPTRADE_CLIENT_ID /],
  [{ LEDGER_SNAPTRADE_CLIENT_ID: 'clïent' }, /^LEDGER_SNAPTRADE_CLIENT_ID /],
  [{ LEDGER_SNAPTRADE_CONSUMER_KEY: 'k'.repeat(257) }, /^LEDGER_SNAPTRADE_CONSUMER_KEY /],
];

for (const [env, names] of bad) {
  test(`refuses ${JSON.stringify(env)} with a ConfigError naming the variable`, () => {
    assert.throws(() => loadConfig(env), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, names);
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    });
  });
}

test('the market-data variables are carried as set, for src/market/select.ts to check at start', () => {
  const env = {
    LEDGER_MARKET_DATA: 'alpaca', LEDGER_ALPACA_DATA_KEY_ID: 'PK1', LEDGER_ALPACA_DATA_SECRET: 's', LEDGER_ALPACA_DATA_URL: 'http://127.0.0.1:1',
    LEDGER_ALPACA_DATA_FEED: 'sip', LEDGER_ALPACA_DATA_BARS_FEED: 'iex', LEDGER_ALPACA_DATA_PLAN: 'basic', LEDGER_SYNTHETIC_SEED: 'x',
  };
  assert.deepEqual(loadConfig({ ...env, LEDGER_ALPACA_TRADING_URL: 'http://127.0.0.1:2', HOME: '/root' }).market, env);
  assert.deepEqual(loadConfig({}).market, {});
});
