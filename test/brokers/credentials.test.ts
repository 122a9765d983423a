// Alpaca credentials through the API on both stores: a key id or secret with characters no
// credential has (white space, line breaks, control or non-ASCII characters) is a 400 naming the
// field before anything is sent to Alpaca; and a provider echoing the secret in another case or
// encoded (URL, base64, base64url, hex, a Basic header) leaks it into none of the connect answer,
// the connection's last_error and the log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { scrub } from '../../src/brokers/http.ts';
import { forEachStore } from '../support/stores.ts';
import { assertError } from '../api/record-helpers.ts';
import { dayOfFills, echoSecret, startAlpacaSim, type SecretEcho } from '../sim/alpaca.ts';
import { brokerTestApp, type BrokerTestApp } from './wiring-support.ts';

const KEYS = { keyId: 'PKECHO00000000000001', secretKey: 'Echo+Secret/Key=Mixed9Case~AbCdEfGh1234' };
const FORMS: SecretEcho[] = ['lower', 'upper', 'url', 'base64', 'base64url', 'hex', 'basic'];

/** Every form of the secret a careless provider could echo, the plain one included. */
const leakedForms = () => [KEYS.secretKey, ...FORMS.filter((f) => f !== 'basic').map((f) => echoSecret(KEYS.keyId, KEYS.secretKey, f))];

function assertNoSecret(where: string, text: string): void {
  for (const form of leakedForms()) assert.ok(!text.toLowerCase().includes(form.toLowerCase()), `${where} holds the secret (as ${form}): ${text}`);
}

const connect = (t: BrokerTestApp, secret: string, body: Record<string, unknown>) => t.app.inject({
  method: 'POST', url: '/v1/brokers/alpaca', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ environment: 'paper', ...body }),
});

test('the scrubber catches the secret in any case and encoded, also inside a longer encoding', () => {
  for (const form of FORMS) {
    const text = `Alpaca said: got ${echoSecret(KEYS.keyId, KEYS.secretKey, form)}; bye`;
    assertNoSecret(form, scrub(text, [KEYS.keyId, KEYS.secretKey]));
  }
  // Two bytes before the secret: from the fifth character on, the encoding depends on the secret alone.
  const inside = Buffer.from(`xy${KEYS.secretKey}z`).toString('base64');
  assert.ok(!scrub(inside, [KEYS.secretKey]).includes(inside.slice(4, 20)), scrub(inside, [KEYS.secretKey]));
  assert.equal(scrub('nothing secret here', [KEYS.secretKey]), 'nothing secret here');
});

await forEachStore('Alpaca credentials', (kind) => {
  let store: LedgerStore;

  before(async () => {
    store = await kind.open();
  });
  after(async () => {
    await store?.close();
    await kind.cleanup();
  });

  test('a credential with white space, control or non-ASCII characters is 400 naming the field; Alpaca is not called', async () => {
    const sim = await startAlpacaSim({ scenario: dayOfFills({ keys: [KEYS] }) });
    const t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
    try {
      const a = await t.agent();
      const bad = ['\n', ' ', '\t', '\r', '\u0001', '\u007f', 'é', '\u00a0', '\u200b', '€'];
      for (const param of ['api_key_id', 'api_secret'] as const) {
        for (const ch of bad) {
          const good = { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey };
          const res = await connect(t, a.secret, { ...good, [param]: param === 'api_key_id' ? `${KEYS.keyId}${ch}` : `${ch}${KEYS.secretKey}` });
          const e = assertError(res, 400, 'invalid_request', param);
          assert.ok(!e.message.includes(KEYS.secretKey.slice(0, 8)), e.message);
        }
      }
      assert.deepEqual(sim.requests, [], 'no request reached Alpaca');
      assert.deepEqual(await store.brokers.listConnections(a.agentId), []);
      // The same pair without the stray characters connects.
      assert.equal((await connect(t, a.secret, { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey })).statusCode, 201);
    } finally {
      await t.close();
      await sim.close();
    }
  });

  test('a master key that cannot be used: 500, and nothing is sent to Alpaca', async () => {
    const sim = await startAlpacaSim({ scenario: dayOfFills({ keys: [KEYS] }) });
    const t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url, LEDGER_MASTER_KEY: 'not-a-key' });
    try {
      const a = await t.agent();
      const res = await connect(t, a.secret, { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey });
      const e = assertError(res, 500, 'internal_error');
      assert.match(e.message, /master key/);
      assert.deepEqual(sim.requests, [], 'the credentials never left the service');
      assert.deepEqual(await store.brokers.listConnections(a.agentId), []);
    } finally {
      await t.close();
      await sim.close();
    }
  });

  test('Alpaca failing with the secret echoed (any case, encoded): the 502 and the log hold none of the broker\'s text', async () => {
    // 422: answered at once (a 5xx is retried, and the simulator's rate-limit headers make that a minute).
    const sim = await startAlpacaSim({ scenario: dayOfFills({ keys: [KEYS], faults: { outage: { from: 1, count: 99, status: 422 } }, quirks: { echoSecretAs: FORMS } }) });
    const t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
    try {
      const a = await t.agent();
      const res = await connect(t, a.secret, { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey });
      const e = assertError(res, 502, 'provider_error');
      assert.match(e.message, /answered HTTP 422 \(the broker refused the request\)/, 'the refusal is named by its status, the broker\'s text left out');
      assert.doesNotMatch(e.message, /redacted/);
      assertNoSecret('the 502', res.body);
      assertNoSecret('the log', t.logs.join('\n'));
    } finally {
      await t.close();
      await sim.close();
    }
  });

  test('Alpaca refusing with the secret echoed: neither the 400 nor last_error after a sync hold it', async () => {
    // The first request (the connect's account check) passes; from the second on the keys are refused, echoed.
    const sim = await startAlpacaSim({ scenario: dayOfFills({ keys: [KEYS], faults: { revokeFrom: 2 }, quirks: { echoSecretAs: FORMS } }) });
    const t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
    try {
      const a = await t.agent();
      const created = await connect(t, a.secret, { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      await t.brokers.syncNow(id);
      const shown = await t.app.inject({ method: 'GET', url: `/v1/brokers/${id}`, headers: { authorization: `Bearer ${a.secret}` } });
      const c = shown.json();
      assert.match(String(c.last_error), /answered HTTP 40[13] \(the broker refused the credentials\)/, shown.body);
      assert.doesNotMatch(String(c.last_error), /redacted/, 'the broker\'s echo never reaches last_error');
      assertNoSecret('last_error', String(c.last_error));
      assertNoSecret('the connection', shown.body);
      const stored = await store.brokers.findConnection(id);
      assertNoSecret('the stored last_error', `${stored?.lastError} ${JSON.stringify(stored?.lastSync)}`);
      const refused = await connect(t, a.secret, { api_key_id: KEYS.keyId, api_secret: KEYS.secretKey });
      assertError(refused, 400, 'invalid_request', 'api_key_id');
      assertNoSecret('the 400', refused.body);
      assertNoSecret('the log', t.logs.join('\n'));
    } finally {
      await t.close();
      await sim.close();
    }
  });
});
