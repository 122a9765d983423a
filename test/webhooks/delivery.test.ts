// Webhook delivery on both stores, end to end through a real receiver that checks every delivery
// with standardwebhooks' own Webhook.verify: each of the agent's events arrives, in chain order,
// and no other agent's; checkpoint and anchor events name the agent's records; a receiver that
// fails for a while (500s, then timeouts) gets every event once it recovers; a loopback receiver
// is refused at delivery when private addresses are not allowed; recording never waits on a
// receiver; and of two deliverers on one database only one delivers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { canonicalJson, sha256Hex } from '../../src/core/index.ts';
import { appendRecords } from '../../src/ledger/append.ts';
import { systemClock } from '../../src/domain/clock.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore, type StoreKind } from '../support/stores.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { validDecision } from '../api/record-helpers.ts';
import { record, testIntegrator, testLogKey } from '../log/helpers.ts';
import { createEndpoint, deliveryLog, sleep, startReceiver, testDeliverer, WEBHOOK_ENV, type Delivery, type LoggedDelivery } from './helpers.ts';

const decisionIds = (ds: Delivery[]) => ds.filter((d) => d.event.type === 'decision.recorded').map((d) => d.event.data.id as string);
const unique = <T>(xs: T[]) => [...new Set(xs)];

async function fixture(kind: StoreKind): Promise<{ store: LedgerStore; t: TestApp; close: () => Promise<void> }> {
  const store = await kind.open();
  const t = await testApp(store, { env: WEBHOOK_ENV });
  return { store, t, close: async () => { await t.close(); await store.close(); } };
}

const deliveries = (t: TestApp, apiKey: string, endpointId: string, until?: (log: LoggedDelivery[]) => boolean) => deliveryLog(t, apiKey, endpointId, until);

await forEachStore('webhook delivery', (kind) => {
  test('signed per Standard Webhooks: every decision once, in chain order, none of another agent; checkpoint and anchor events', async () => {
    const { store, t, close } = await fixture(kind);
    let secret: string | null = null;
    const rx = await startReceiver(() => secret);
    const deliverer = testDeliverer(store);
    try {
      const agent = await t.agent();
      const other = await t.agent();
      const ep = await createEndpoint(t, agent.secret, rx.url, ['decision.recorded', 'checkpoint.published', 'anchor.confirmed']);
      secret = ep.secret;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        ids.push(...await record(t, agent.secret, 1));
        await record(t, other.secret, 1);
      }
      await rx.waitFor(() => decisionIds(rx.accepted).length >= 12, 20_000, 'twelve decisions');
      assert.deepEqual(rx.rejected, [], 'every delivery verifies with standardwebhooks');
      assert.deepEqual(decisionIds(rx.accepted), ids, "the agent's decisions, once each, in chain order, and nothing of the other agent");
      assert.deepEqual(rx.accepted.map((d) => d.event.data.chain_seq), ids.map((_, i) => i + 1));
      assert.equal(unique(rx.accepted.map((d) => d.id)).length, 12, 'one webhook-id per message');
      const first = rx.accepted[0]!.event;
      assert.equal(first.timestamp, (first.data.record as { entry: { recorded_at: string } }).entry.recorded_at);
      assert.equal((first.data.record as { chain_hash: string }).chain_hash, first.data.chain_hash);

      // The log integrates: one checkpoint.published naming exactly the agent's records.
      const { key } = await testLogKey();
      const integrator = testIntegrator(store, key);
      await integrator.integratePending();
      await integrator.stop();
      await rx.waitFor(() => rx.accepted.some((d) => d.event.type === 'checkpoint.published'), 20_000, 'the checkpoint event');
      const checkpoint = rx.accepted.find((d) => d.event.type === 'checkpoint.published')!.event.data as { tree_size: number; records: { id: string }[]; checkpoint: string };
      assert.equal(checkpoint.tree_size, 24);
      assert.deepEqual(checkpoint.records.map((r) => r.id), ids, "the checkpoint event lists the agent's records only");
      assert.match(checkpoint.checkpoint, /^ledger\.test\/log\n24\n/);

      // Its anchor is confirmed: anchor.confirmed names the newest record it covers.
      const job = await store.anchors.tryAnchorJob();
      assert.ok(job);
      await job.insert({
        treeSize: 24, root: 'cm9vdA==', digest: new Uint8Array(32), ots: new Uint8Array([1]), status: 'confirmed', calendars: [],
        block: { height: 900_000, hash: '00'.repeat(32), merkleRoot: '11'.repeat(32), time: 1_750_000_000 },
        createdAt: new Date().toISOString(), lastAttemptAt: null, lastError: null, attempts: 1, nextAttemptAt: null,
      });
      await job.release();
      await rx.waitFor(() => rx.accepted.some((d) => d.event.type === 'anchor.confirmed'), 20_000, 'the anchor event');
      const anchor = rx.accepted.find((d) => d.event.type === 'anchor.confirmed')!.event.data as { tree_size: number; covers_through: { id: string }; block: { height: number } };
      assert.equal(anchor.tree_size, 24);
      assert.equal(anchor.covers_through.id, ids[11]);
      assert.equal(anchor.block.height, 900_000);

      const log = await deliveries(t, agent.secret, ep.id, (l) => l.length === 14 && l.every((m) => m.status === 'delivered'));
      assert.equal(log.length, 14);
      assert.ok(log.every((m) => m.status === 'delivered' && m.attempt_count === 1 && m.attempts[0]!.status_code === 204 && m.next_attempt_at === null));
    } finally {
      await deliverer.stop();
      await rx.close();
      await close();
    }
  });

  test('execution.recorded: an execution appended as the broker sync does reaches the endpoints that take it, with its provenance', async () => {
    const { store, t, close } = await fixture(kind);
    const secrets: (string | null)[] = [null, null];
    const [both, decisionsOnly] = await Promise.all([0, 1].map((i) => startReceiver(() => secrets[i]!)));
    const deliverer = testDeliverer(store);
    try {
      const agent = await t.agent();
      secrets[0] = (await createEndpoint(t, agent.secret, both!.url, ['decision.recorded', 'execution.recorded'])).secret;
      secrets[1] = (await createEndpoint(t, agent.secret, decisionsOnly!.url, ['decision.recorded'])).secret;
      const [decision] = await record(t, agent.secret, 1);
      const content = canonicalJson({ agent: agent.handle, broker: 'alpaca', canon: 'canon_v1', symbol: 'AAPL', type: 'execution' });
      const [outcome] = await appendRecords(store, [{
        agentId: agent.agentId, agentHandle: agent.handle, type: 'execution', symbol: 'AAPL', content, contentHash: sha256Hex(content),
        signature: null, linkToken: null, idempotency: null,
      }], systemClock);
      assert.equal(outcome!.kind, 'recorded');
      await both!.waitFor(() => both!.accepted.length >= 2, 20_000, 'the decision and the execution');
      await decisionsOnly!.waitFor(() => decisionsOnly!.accepted.length >= 1, 20_000, 'the decision');
      assert.deepEqual(both!.accepted.map((d) => d.event.type), ['decision.recorded', 'execution.recorded']);
      const execution = both!.accepted[1]!.event.data as { object: string; chain_seq: number; record: { provenance: string; broker: string } };
      assert.deepEqual([execution.object, execution.chain_seq, execution.record.provenance, execution.record.broker], ['execution', 2, 'BROKER_SYNCED', 'alpaca']);
      await sleep(200);
      assert.deepEqual(decisionsOnly!.accepted.map((d) => d.event.data.id), [decision], 'an endpoint hears only the events it took');
    } finally {
      await deliverer.stop();
      for (const rx of [both, decisionsOnly]) await rx!.close();
      await close();
    }
  });

  test('a receiver failing for a while (500s, then timeouts) gets every event once it recovers, in order', async () => {
    const { store, t, close } = await fixture(kind);
    let secret: string | null = null;
    let healthy = false;
    const rx = await startReceiver(() => secret, (_d, n) => (healthy ? { status: 200 } : n <= 4 ? { status: 500 } : 'hang'));
    const deliverer = testDeliverer(store, { env: { LEDGER_WEBHOOKS_TIMEOUT_MS: '300' } });
    try {
      const agent = await t.agent();
      const ep = await createEndpoint(t, agent.secret, rx.url);
      secret = ep.secret;
      const ids = await record(t, agent.secret, 10);
      await rx.waitFor(() => rx.received.length >= 6, 20_000, 'failing attempts');
      assert.equal(rx.accepted.length, 0);
      healthy = true;
      await rx.waitFor(() => unique(decisionIds(rx.accepted)).length >= 10, 30_000, 'every event after recovery');
      assert.deepEqual(unique(decisionIds(rx.accepted)), ids, 'every event, in chain order');
      const log = await deliveries(t, agent.secret, ep.id, (l) => l.every((m) => m.status === 'delivered'));
      const head = log.find((m) => m.subject === ids[0])!;
      assert.equal(head.status, 'delivered');
      assert.ok(head.attempt_count >= 6);
      assert.deepEqual(head.attempts.slice(0, 4).map((a) => a.status_code), [500, 500, 500, 500]);
      assert.match(head.attempts[4]!.error ?? '', /timed out after \d+ ms/);
      assert.equal(head.attempts[4]!.status_code, null);
      assert.ok(log.every((m) => m.status === 'delivered'));
      const [endpoint] = await store.webhooks.listEndpoints(agent.agentId);
      assert.equal(endpoint!.status, 'active');
    } finally {
      await deliverer.stop();
      await rx.close();
      await close();
    }
  });

  test('private addresses not allowed: a name resolving to 127.0.0.1 is refused at delivery, and logged', async () => {
    const { store, t, close } = await fixture(kind);
    const rx = await startReceiver(() => null);
    const deliverer = testDeliverer(store, { env: { LEDGER_WEBHOOKS_ALLOW_PRIVATE: 'false' } });
    try {
      const agent = await t.agent();
      // Registered while allowed (an operator may turn the flag off later, or DNS may change).
      const ep = await createEndpoint(t, agent.secret, rx.url.replace('127.0.0.1', 'localhost'));
      await record(t, agent.secret, 1);
      let log: Awaited<ReturnType<typeof deliveries>> = [];
      for (let i = 0; log[0]?.attempts.length !== 1; i++) {
        assert.ok(i < 500, 'the attempt is logged');
        await sleep(20);
        log = await deliveries(t, agent.secret, ep.id);
      }
      assert.match(log[0]!.attempts[0]!.error!, /^refused: localhost is not a public host /);
      assert.doesNotMatch(log[0]!.attempts[0]!.error!, /127\.0\.0\.1|::1|loopback/);
      assert.equal(log[0]!.status, 'pending', 'tried again later, in case the address changes');
      assert.equal(rx.received.length + rx.rejected.length, 0, 'nothing reached the receiver');
    } finally {
      await deliverer.stop();
      await rx.close();
      await close();
    }
  });

  test('recording never waits on a delivery: with every receiver hanging, every write answers 201', async () => {
    const { store, t, close } = await fixture(kind);
    const secrets: (string | null)[] = [null, null, null];
    const receivers = await Promise.all(secrets.map((_, i) => startReceiver(() => secrets[i]!, () => 'hang')));
    const deliverer = testDeliverer(store, { env: { LEDGER_WEBHOOKS_TIMEOUT_MS: '60000', LEDGER_WEBHOOKS_CONCURRENCY: '2' } });
    try {
      const agent = await t.agent();
      const endpoints = [];
      for (const [i, rx] of receivers.entries()) {
        const ep = await createEndpoint(t, agent.secret, rx.url);
        secrets[i] = ep.secret;
        endpoints.push(ep);
      }
      await record(t, agent.secret, 1);
      await receivers[0]!.waitFor(() => receivers.filter((r) => r.received.length > 0).length === 2, 20_000, 'two hanging attempts');
      const answers = await Promise.all(Array.from({ length: 40 }, () => postDecision(t, agent.secret, validDecision())));
      assert.deepEqual(answers.map((a) => a.statusCode), new Array(40).fill(201));
      // Not one attempt has finished: the writes did not wait for any.
      for (const ep of endpoints) assert.ok((await deliveries(t, agent.secret, ep.id)).every((m) => m.attempt_count === 0));
    } finally {
      for (const rx of receivers) await rx.close();
      await deliverer.stop();
      await close();
    }
  });

  test('two deliverers on one database: one delivers, each message once; the other takes over when it stops', async () => {
    const url = await kind.freshUrl();
    const storeA = openStore(url);
    await storeA.migrate();
    const storeB = openStore(url);
    await storeB.migrate();
    const t = await testApp(storeA, { env: WEBHOOK_ENV });
    let secret: string | null = null;
    const rx = await startReceiver(() => secret);
    const a = testDeliverer(storeA);
    const b = testDeliverer(storeB);
    try {
      const agent = await t.agent();
      secret = (await createEndpoint(t, agent.secret, rx.url)).secret;
      const ids = await record(t, agent.secret, 30);
      await rx.waitFor(() => rx.accepted.length >= 30, 20_000, 'thirty deliveries');
      await sleep(300);
      assert.equal(rx.received.length, 30, 'no message twice');
      assert.deepEqual(decisionIds(rx.accepted), ids);
      assert.equal([a, b].filter((d) => d.holding).length, 1, 'one holder');
      const [holder, other] = a.holding ? [a, b] : [b, a];
      await holder.stop();
      const more = await record(t, agent.secret, 5);
      await rx.waitFor(() => rx.accepted.length >= 35, 20_000, 'the other deliverer takes over');
      assert.ok(other.holding);
      assert.deepEqual(decisionIds(rx.accepted), [...ids, ...more]);
    } finally {
      await a.stop();
      await b.stop();
      await rx.close();
      await t.close();
      await storeA.close();
      await storeB.close();
      await kind.cleanup();
    }
  });
});
