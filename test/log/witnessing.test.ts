// The log asks witnesses (issue 26 scope 1), on both stores: with a policy of two real witnesses
// (the `ledger witness` handler and its SQLite state, in process), every new checkpoint is sent
// with the consistency proof from the size each last cosigned, each cosignature is verified and
// stored append-only, and /v1/log/checkpoint, /v1/transparency and proofs publish them with the
// quorum status. A witness that is down is recorded as failing and does not stop the other; one
// that lost its state teaches its size by 409 and cosigns again. Without a policy nothing changes.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { openCheckpoint, parseVkey } from '../../src/core/note.ts';
import { checkWitnessed, parseWitnessPolicy, type WitnessPolicy } from '../../src/core/witness-policy.ts';
import { verifyDocument } from '../../src/client/verify.ts';
import { WitnessingJob } from '../../src/log/witnessing.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { forEachStore, runSql } from '../support/stores.ts';
import { logList, seededWitnessKey, startTestWitness, value } from '../witness/helpers.ts';
import { record, testIntegrator, testLogKey } from './helpers.ts';

const K1 = seededWitnessKey('w1.test/witness', 0x11);
const K2 = seededWitnessKey('w2.test/witness', 0x12);
const nowSeconds = () => Math.floor(Date.now() / 1000);

type Transparency = { log: { checkpoint: string | null; tree_size: number; witnesses?: { quorum: string; checkpoint: { quorum_satisfied: boolean; cosigned_by: string[] } | null; witnesses: { name: string; last_cosigned_size: number | null; last_error: string | null; failures: number }[] } } };

await forEachStore('the log asks its witnesses', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let plain: TestApp;
  let policy: WitnessPolicy;
  let job: WitnessingJob;
  let integrate: () => Promise<number>;
  let stopIntegrator: () => Promise<void>;
  let logVkey: string;
  let secret: string;
  const witnesses: { w1?: Awaited<ReturnType<typeof startTestWitness>>; w2?: Awaited<ReturnType<typeof startTestWitness>> } = {};
  let w2Port = 0;

  before(async () => {
    store = await kind.open();
    const { key } = await testLogKey();
    logVkey = key.vkey;
    witnesses.w1 = await startTestWitness({ list: logList(key.vkey), key: K1, now: nowSeconds });
    witnesses.w2 = await startTestWitness({ list: logList(key.vkey), key: K2, now: nowSeconds });
    w2Port = Number(new URL(witnesses.w2.url).port);
    policy = value(parseWitnessPolicy(`# two witnesses, both needed\nwitness A ${K1.vkey} ${witnesses.w1.url}\nwitness B ${K2.vkey} ${witnesses.w2.url}\ngroup both all A B\nquorum both\n`));
    t = await testApp(store, { witnessPolicy: policy, logVkey });
    plain = await testApp(store, { logVkey });
    const integrator = testIntegrator(store, key);
    integrate = () => integrator.integratePending();
    stopIntegrator = () => integrator.stop();
    job = new WitnessingJob({ policy, log: store.log, cosignatures: store.cosignatures, minBackoffMs: 50, timeoutMs: 2_000 });
    secret = (await t.agent()).secret;
  });

  after(async () => {
    await job.stop();
    await stopIntegrator();
    await witnesses.w1?.stop();
    await witnesses.w2?.stop();
    await t.close();
    await plain.close();
    await store.close();
    await kind.cleanup();
  });

  const transparency = async (app = t) => (await app.app.inject({ method: 'GET', url: '/v1/transparency' })).json() as Transparency;
  const checkpoint = async (app = t) => (await app.app.inject({ method: 'GET', url: '/v1/log/checkpoint' })).body;

  it('cosigns every new checkpoint with both witnesses, from the size each last cosigned, and publishes the cosignatures', async () => {
    const ids = await record(t, secret, 3);
    await integrate();
    await job.askNow();
    const first = await checkpoint();
    assert.equal(first.split('\n')[1], '3');
    assert.ok(openCheckpoint(first, value(parseVkey(logVkey)), verifyRaw).ok, 'the log signature still verifies among the cosignatures');
    const check = checkWitnessed(first, policy, verifyRaw)!;
    assert.deepEqual(check.cosigned.map((c) => c.witness), ['A', 'B']);
    assert.equal(check.satisfied, true);

    // The next checkpoint goes with the consistency proof 3 -> 5: a witness cosigns nothing else.
    await record(t, secret, 2);
    await integrate();
    await job.askNow();
    const second = await checkpoint();
    assert.equal(second.split('\n')[1], '5');
    assert.equal(checkWitnessed(second, policy, verifyRaw)!.satisfied, true);

    const doc = await transparency();
    assert.equal(doc.log.checkpoint, second);
    assert.deepEqual(doc.log.witnesses?.checkpoint, { quorum_satisfied: true, cosigned_by: ['A', 'B'] });
    assert.equal(doc.log.witnesses?.quorum, 'all A, B');
    assert.deepEqual(doc.log.witnesses?.witnesses.map((w) => [w.name, w.last_cosigned_size, w.last_error, w.failures]), [['A', 5, null, 0], ['B', 5, null, 0]]);

    const proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[0]}` })).json();
    assert.deepEqual(proof.inclusion_proof.witnessed, { quorum_satisfied: true, cosigned_by: ['A', 'B'] });
    assert.equal(proof.inclusion_proof.checkpoint, second);
    const verified = await verifyDocument(proof, { vkey: logVkey, witnesses: [K1.vkey, K2.vkey], quorum: 2 });
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((c) => c.ok === false)));
    assert.ok(verified.checks.some((c) => c.name === 'witnesses' && c.ok === true));
    const inclusion = (await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${ids[0]}&tree_size=3` })).json();
    assert.equal(inclusion.checkpoint, first);
    assert.deepEqual(inclusion.witnessed, { quorum_satisfied: true, cosigned_by: ['A', 'B'] });
  });

  it('stores cosignatures append-only', async () => {
    await assert.rejects(runSql(store, 'UPDATE log_cosignatures SET line = $1', ['x']), /append_only/);
    await assert.rejects(runSql(store, 'DELETE FROM log_cosignatures'), /append_only/);
  });

  it('without a policy, nothing published changes: one signature line, no witness fields', async () => {
    const note = await checkpoint(plain);
    assert.equal(note.split('\n').filter((l) => l.startsWith('\u2014 ')).length, 1);
    const doc = await transparency(plain);
    assert.deepEqual(Object.keys(doc.log), ['vkey', 'checkpoint', 'tree_size', 'checkpoint_at', 'checkpoint_url', 'tiles_url']);
    const page = await plain.app.inject({ method: 'GET', url: '/transparency' });
    assert.doesNotMatch(page.body, /id="witnesses"/);
    const withPolicy = await t.app.inject({ method: 'GET', url: '/transparency' });
    assert.match(withPolicy.body, /id="witnesses"/);
    assert.match(withPolicy.body, /quorum met/);
  });

  it('a witness that is down is recorded as failing, the quorum unmet, and it cosigns again once back, even with its state lost (409 teaches its size)', async () => {
    await witnesses.w2!.stop();
    witnesses.w2 = undefined;
    const ids = await record(t, secret, 1);
    await integrate();
    await job.askNow();
    let doc = await transparency();
    assert.equal(doc.log.tree_size, 6);
    assert.deepEqual(doc.log.witnesses?.checkpoint, { quorum_satisfied: false, cosigned_by: ['A'] });
    const b = doc.log.witnesses!.witnesses.find((w) => w.name === 'B')!;
    assert.equal(b.last_cosigned_size, 5);
    assert.equal(b.failures, 1);
    assert.match(b.last_error ?? '', /unreachable|no answer/);
    const proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[0]}` })).json();
    assert.deepEqual(proof.inclusion_proof.witnessed, { quorum_satisfied: false, cosigned_by: ['A'] });
    const refused = await verifyDocument(proof, { vkey: logVkey, witnesses: [K1.vkey, K2.vkey], quorum: 2 });
    assert.equal(refused.ok, false);
    assert.ok(refused.checks.some((c) => c.name === 'witnesses' && c.ok === false));
    assert.equal((await verifyDocument(proof, { vkey: logVkey, witnesses: [K1.vkey, K2.vkey], quorum: 1 })).ok, true);

    // Back on the same address with an empty state: the log sends `old 5`, learns 0 from the 409, and sends `old 0`.
    witnesses.w2 = await startTestWitness({ list: logList(logVkey), key: K2, now: nowSeconds, port: w2Port });
    await job.askNow();
    doc = await transparency();
    assert.deepEqual(doc.log.witnesses?.checkpoint, { quorum_satisfied: true, cosigned_by: ['A', 'B'] });
    assert.deepEqual(doc.log.witnesses!.witnesses.map((w) => [w.name, w.last_cosigned_size, w.last_error, w.failures]), [['A', 6, null, 0], ['B', 6, null, 0]]);
  });
});
