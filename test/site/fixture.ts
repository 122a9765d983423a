// A ledger with something to show, for the site's tests: a real app on a real store, listening
// on a loopback port, with an agent that records unsigned and signed decisions (a thesis and
// metadata full of markup), imports a day of fills from the Alpaca simulator (links by link token
// and inferred), a demo agent, the global log integrated (inclusion proofs), and two anchors
// written through the anchoring job's own session (one confirmed at a block height, one pending:
// test fixtures, not anchors of the real Bitcoin chain).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { TestClock, connectAlpaca } from '../brokers/wiring-support.ts';
import { testIntegrator, testLogKey } from '../log/helpers.ts';
import { dayOfFills, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { idempotencyKey } from '../support/app.ts';
import { newKeypair, sign } from '../signing/helpers.ts';

/** Strings that would run script or break out of an attribute if any page failed to escape them. */
export const HOSTILE = {
  thesis: '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=1"> "quoted" & \'single\' </textarea></pre>',
  metadata: { note: '</script><script>window.__pwned=1</script>', 'a"b': '<b onmouseover=alert(1)>x</b>' },
  displayName: '<img src=x onerror=window.__pwned=1>Bot "Alpha" & co',
};

export type SiteFixture = {
  ledger: LedgerApp;
  store: LedgerStore;
  url: string;
  handle: string;
  demoHandle: string;
  /** An agent whose display name and decision are hostile markup. */
  hostileHandle: string;
  /** An unsigned decision, a signed one, an execution linked by link token, an inferred one. */
  ids: { unsigned: string; signed: string; linked: string; inferred: string; hostile: string };
  close: () => Promise<void>;
};

async function post(ledger: LedgerApp, secret: string, url: string, body: unknown) {
  const res = await ledger.app.inject({
    method: 'POST', url, payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey() },
  });
  assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
  return res.json();
}

export async function siteFixture(store: LedgerStore): Promise<SiteFixture> {
  const sim: AlpacaSim = await startAlpacaSim({ scenario: dayOfFills() });
  let ledger: LedgerApp | undefined;
  try {
    return await build(store, sim, (l) => (ledger = l));
  } catch (e) {
    await ledger?.close();
    await sim.close();
    throw e;
  }
}

async function build(store: LedgerStore, sim: AlpacaSim, built: (l: LedgerApp) => void): Promise<SiteFixture> {
  const { key } = await testLogKey();
  const clock = new TestClock(Date.parse('2026-03-13T13:00:00.000Z'));
  // Every reader here is one address: the browser suites load three pages at once (each with its
  // badge and data reads) beside their link checks, under a full test run's load. The read limits
  // have their own tests (test/public/); here they hold that many reads at once, and a read that
  // queues waits instead of being refused.
  const config = loadConfig({
    LEDGER_DATABASE_URL: 'sqlite::memory:', LEDGER_MASTER_KEY: randomBytes(32).toString('base64'), LEDGER_SYNC_INTERVAL_S: '0',
    LEDGER_ALPACA_TRADING_URL: sim.url, LEDGER_READ_LIMIT_PER_MIN: '1000000', LEDGER_READ_QUEUE_WAIT_MS: '60000',
    LEDGER_READ_CONCURRENCY: '16', LEDGER_READ_CONCURRENCY_PER_CLIENT: '16',
  });
  const ledger = await buildApp(compose({ store, config, clock, checkSignature: signatureChecker(store), logVkey: key.vkey }));
  built(ledger);
  const operators = new Operators(store, clock);
  const made = await operators.createAgent({ handle: 'momentum-bot', displayName: 'Momentum Bot' });
  const demo = await operators.createAgent({ handle: 'demo-bot', demo: true });
  const attacker = await operators.createAgent({ handle: 'hostile-bot', displayName: HOSTILE.displayName });
  assert.ok(made.ok && demo.ok && attacker.ok);
  const secret = made.value.apiKey.secret;

  const aapl = await post(ledger, secret, '/v1/decisions', { symbol: 'AAPL', action: 'BUY', quantity: '10', confidence: 0.72, time_horizon: '3 months', thesis: 'Services margin expanding faster than consensus.' });
  const spy = await post(ledger, secret, '/v1/decisions', { symbol: 'SPY', action: 'INCREASE', quantity: '5', confidence: 0.55, time_horizon: '5 days', thesis: 'Breadth improving.' });
  const hostile = await post(ledger, attacker.value.apiKey.secret, '/v1/decisions', { symbol: 'MSFT', action: 'HOLD', thesis: HOSTILE.thesis, metadata: HOSTILE.metadata });
  const pair = newKeypair();
  const registered = await post(ledger, secret, '/v1/keys', { public_key: pair.publicKey, label: 'production <signer>' });
  const fields = { symbol: 'NVDA', action: 'SELL', quantity: '3', confidence: 0.6, thesis: 'Signed: taking profits.', occurred_at: clock.now().toISOString() };
  const nonce = `nonce-${randomBytes(6).toString('hex')}`;
  const asserted = await post(ledger, secret, '/v1/decisions/assertion', { ...fields, nonce });
  const signed = await post(ledger, secret, '/v1/decisions', { ...fields, signature: { key_id: registered.id, nonce, signature: sign(asserted.payload, pair) } });
  assert.equal(signed.verification.agent_signed, true);
  await post(ledger, demo.value.apiKey.secret, '/v1/decisions', { symbol: 'QQQ', action: 'BUY', quantity: '1', thesis: 'A demo decision.' });

  sim.scenario.orders.find((o) => o.symbol === 'AAPL' && o.parent === null && o.replaces === null)!.client_order_id = aapl.link_token;
  clock.set('2026-03-13T21:00:00.000Z');
  const connection = await connectAlpaca(Object.assign(ledger, { store, clock }) as never, secret, sim);
  const synced = await ledger.brokers.syncNow(connection);
  assert.equal(synced.kind, 'synced', JSON.stringify(synced));

  const integrator = testIntegrator(store, key);
  assert.ok((await integrator.integratePending()) > 0);
  await fixtureAnchor(store, 'confirmed');
  await post(ledger, secret, '/v1/decisions', { symbol: 'AAPL', action: 'REDUCE', quantity: '2', thesis: 'Trimming after the run-up.' });
  assert.ok((await integrator.integratePending()) > 0);
  await fixtureAnchor(store, 'pending');
  await integrator.stop();

  const executions = await store.listAgentRecords(made.value.agent.id, 'execution', { limit: 1000 });
  const linkOf = (r: { content: string }) => (JSON.parse(r.content) as { link: { method: string; decision_id: string } | null }).link;
  const linked = executions.find((r) => linkOf(r)?.method === 'link_token' && linkOf(r)?.decision_id === aapl.id);
  const inferred = executions.find((r) => linkOf(r)?.method === 'inferred' && linkOf(r)?.decision_id === spy.id);
  assert.ok(linked && inferred, 'the sync linked fills by token and by inference');

  await ledger.directoryJob.catchUp(); // the leaderboard (/agents) lists what the job projected
  await ledger.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(ledger.app.server.address() as AddressInfo).port}`;
  return {
    ledger, store, url, handle: 'momentum-bot', demoHandle: 'demo-bot', hostileHandle: 'hostile-bot',
    ids: { unsigned: aapl.id, signed: signed.id, linked: linked.id, inferred: inferred.id, hostile: hostile.id },
    close: async () => {
      await ledger.close();
      await sim.close();
    },
  };
}

/** An anchor of the log's latest checkpoint (a fixture row: no calendar or Bitcoin block behind it). */
async function fixtureAnchor(store: LedgerStore, status: 'confirmed' | 'pending'): Promise<void> {
  const latest = await store.log.latestCheckpoint();
  assert.ok(latest);
  const session = await store.anchors.tryAnchorJob();
  assert.ok(session);
  const base = { digest: new Uint8Array(32), ots: new Uint8Array([0]), calendars: ['https://calendar.test'], lastAttemptAt: null, lastError: null, attempts: 0, nextAttemptAt: null };
  const root = Buffer.alloc(32, 7).toString('base64');
  const block = status === 'confirmed' ? { height: 840_000, hash: '00'.repeat(32), merkleRoot: '11'.repeat(32), time: 1_773_400_000 } : null;
  await session.insert({ ...base, treeSize: latest.treeSize, root, status, block, createdAt: '2026-03-13T21:00:00.000Z' });
  await session.release();
}
