// Issue 16, finding 7: secrets never reach the log, never sit in a cache, and a blank admin token
// cannot start the service.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loggerOptions, redactSecrets } from '../../src/api/logging.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { ADMIN_TOKEN } from '../support/app.ts';

const SECRET = 'dl_live_Secret0123456789abcdefSecret';
let store: LedgerStore;
let ledger: LedgerApp;
let log = '';

before(async () => {
  store = openStore('sqlite::memory:');
  await store.migrate();
  const stream = new Writable({ write(chunk, _encoding, done) { log += chunk.toString(); done(); } });
  const config = loadConfig({ LEDGER_ADMIN_TOKEN: ADMIN_TOKEN, LEDGER_DATABASE_URL: 'sqlite::memory:' });
  ledger = await buildApp(compose({ store, config, checkSignature: signatureChecker(store) }), { logger: { ...loggerOptions('info'), stream } });
});
after(async () => {
  await ledger.close();
  await store.close();
});

test('an API key in a query string, or a secret-named parameter, is redacted from the request log', async () => {
  await ledger.app.inject({ method: 'GET', url: `/v1/decisions?api_key=${SECRET}&limit=5` });
  await ledger.app.inject({ method: 'GET', url: `/v1/ledger?limit=5&token=opaque-token-value&x=${encodeURIComponent(SECRET)}` });
  await ledger.app.inject({ method: 'GET', url: `/v1/agents/${SECRET}` });
  await ledger.app.inject({ method: 'GET', url: '/v1/decisions', headers: { authorization: `Bearer ${SECRET}` } });
  assert.ok(log.includes('/v1/decisions?api_key=[redacted]&limit=5'), log);
  assert.ok(log.includes('token=[redacted]'));
  assert.ok(!log.includes(SECRET), 'the key appears nowhere in the log');
  assert.ok(!log.includes('opaque-token-value'));
  assert.ok(!log.includes(ADMIN_TOKEN));
});

test('redactSecrets keeps what is not secret', () => {
  assert.equal(redactSecrets('/v1/ledger?limit=5&cursor=dec_01ABC'), '/v1/ledger?limit=5&cursor=dec_01ABC');
  assert.equal(redactSecrets('/v1/x?password=p&q=%E0'), '/v1/x?password=[redacted]&q=%E0');
  assert.equal(redactSecrets('/brokers/snaptrade/callback?state=Zm9vYmFy-_x&status=SUCCESS&connection_id=c1'),
    '/brokers/snaptrade/callback?state=[redacted]&status=SUCCESS&connection_id=c1', 'the SnapTrade state is a single-use secret');
});

test('the responses that carry a new API key secret say Cache-Control: no-store', async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const created = await ledger.app.inject({ method: 'POST', url: '/v1/admin/agents', headers: admin, payload: { handle: `nostore-${process.pid}` } });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.headers['cache-control'], 'no-store');
  const issued = await ledger.app.inject({ method: 'POST', url: `/v1/admin/agents/nostore-${process.pid}/api-keys`, headers: admin, payload: {} });
  assert.equal(issued.statusCode, 201, issued.body);
  assert.equal(issued.headers['cache-control'], 'no-store');
  assert.ok(!log.includes(created.json().api_key.secret), 'the created secret is not logged');
});

test('a whitespace-only or padded-short admin token fails the start', () => {
  assert.throws(() => loadConfig({ LEDGER_ADMIN_TOKEN: ' '.repeat(20) }), ConfigError);
  assert.throws(() => loadConfig({ LEDGER_ADMIN_TOKEN: `  short  ${' '.repeat(10)}` }), ConfigError);
});
