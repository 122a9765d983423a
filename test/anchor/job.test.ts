// Anchoring wired into the service, on SQLite and PostgreSQL. The full path: records -> checkpoint
// -> two calendar simulators -> a mined block -> upgrade -> /transparency counts it anchored ->
// `ledger verify` (its anchor check) confirms the .ots against the header from the Esplora
// simulator; a tampered .ots is caught; with unreachable calendars nothing else is affected and
// /transparency says since when.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { esploraHeaderSource } from '../../src/verify/bitcoin-headers.ts';
import { checkProofAnchor, runAnchorCheck } from '../../src/verify/anchor.ts';
import { AnchorJob, type AnchorJobOptions } from '../../src/anchor/job.ts';
import { toHex } from '../../src/method/ots/codec.ts';
import type { StoredAnchor } from '../../src/anchor/port.ts';
import type { LogKey } from '../../src/log/key.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { SimChain } from '../sim/bitcoin-chain.ts';
import { startEsploraSim, type EsploraSim } from '../sim/esplora.ts';
import { startCalendarSim, type CalendarSim } from '../sim/ots-calendar.ts';
import { getBytes, record, testIntegrator, testLogKey } from '../log/helpers.ts';

const http = { timeoutMs: 2_000 };
const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

/** `ledger verify ...` as a child process (async: the simulators answer from this process). */
function ledgerVerify(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'verify', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

await forEachStore('anchoring', (kind) => {
  let t: TestApp;
  let key: LogKey;
  let chain: SimChain;
  let alice: CalendarSim;
  let bob: CalendarSim;
  let esplora: EsploraSim;
  let clock = Date.parse('2026-01-05T10:00:00Z');
  const now = () => new Date(clock);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-anchor-'));
  const lines: string[] = [];
  const out = (l: string) => lines.push(l);
  let ids: string[] = [];
  let secret = '';

  before(async () => {
    ({ key } = await testLogKey());
    t = await testApp(await kind.open(), { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
    chain = new SimChain(880_000);
    [alice, bob, esplora] = await Promise.all([startCalendarSim(chain), startCalendarSim(chain), startEsploraSim(chain)]);
    secret = (await t.agent()).secret;
  });
  after(async () => {
    await Promise.all([alice.close(), bob.close(), esplora.close()]);
    await closeTestApp(t, kind);
  });

  const job = (calendars: string[], more: Partial<AnchorJobOptions> = {}) => new AnchorJob({
    anchors: t.store.anchors, log: t.store.log, calendars, headerAt: esploraHeaderSource(esplora.url, http).headerAt,
    intervalS: 600, pollS: 1, now, http, ...more,
  });
  const transparency = async () => (await t.app.inject({ method: 'GET', url: '/v1/transparency' })).json().anchoring;
  const integrate = async () => {
    const integrator = testIntegrator(t.store, key);
    await integrator.integratePending();
    await integrator.stop();
  };

  test('before any checkpoint: nothing to anchor, anchor_proof null, transparency counts none', async () => {
    const j = job([alice.url, bob.url]);
    assert.deepEqual(await j.tick(), { held: true, stamped: null, confirmed: [] });
    const a = await transparency();
    assert.equal(a.live, true);
    assert.equal(a.anchored_roots, 0);
    assert.equal(a.pending_roots, 0);
    assert.equal(a.calendars_unreachable_since, null);
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/anchors' })).json().data, []);
    const proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${(await record(t, secret, 1))[0]}` })).json();
    assert.equal(proof.anchor_proof, null);
  });

  test('OpenAPI: both anchor operations are public, the file is application/vnd.opentimestamps.v1', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const list = doc.paths['/v1/anchors'].get;
    const file = doc.paths['/v1/anchors/{file}'].get;
    assert.equal(list.operationId, 'listAnchors');
    assert.deepEqual(list.security, []);
    assert.equal(file.operationId, 'getAnchorFile');
    assert.deepEqual(file.security, []);
    assert.ok(file.responses['200'].content['application/vnd.opentimestamps.v1']);
    assert.ok(doc.paths['/v1/transparency'].get.responses['200'].content['application/json'].schema.properties.anchoring.properties.calendars_unreachable_since);
  });

  test('full path: records -> checkpoint -> calendars -> block -> upgrade -> transparency -> verify', async () => {
    ids = await record(t, secret, 4);
    await integrate();
    const j = job([alice.url, bob.url]);
    const first = await j.tick();
    assert.equal(first.stamped, 5);
    assert.equal(alice.pending, 1);
    assert.equal(bob.pending, 1);

    let a = await transparency();
    assert.equal(a.pending_roots, 1);
    assert.equal(a.anchored_roots, 0);
    assert.equal(a.latest_pending.tree_size, 5);
    assert.deepEqual(a.latest_pending.calendars.sort(), [alice.url, bob.url].sort());
    let proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[0]}` })).json();
    assert.equal(proof.anchor_proof.status, 'pending');
    assert.equal(proof.anchor_proof.tree_size, 5);

    // Not grown, interval not over: no second stamp; the poll waits for its backoff.
    assert.deepEqual(await j.tick(), { held: true, stamped: null, confirmed: [] });
    clock += 2_000;
    assert.deepEqual((await j.tick()).confirmed, [], 'not mined yet: still pending');
    const polled = await t.store.anchors.at(5);
    assert.equal(polled?.attempts, 1);
    assert.ok(Date.parse(polled!.nextAttemptAt!) >= clock + 2_000, 'backoff doubles');

    const blockA = alice.mine();
    const blockB = bob.mine();
    assert.ok(blockA && blockB);
    clock += 5_000;
    assert.deepEqual((await j.tick()).confirmed, [5]);

    a = await transparency();
    assert.equal(a.anchored_roots, 1);
    assert.equal(a.pending_roots, 0);
    assert.equal(a.latest_confirmed.tree_size, 5);
    assert.equal(a.latest_confirmed.status, 'confirmed');
    assert.equal(a.latest_confirmed.block_height, blockA.height);
    assert.equal(a.latest_confirmed.block_hash, blockA.hash);
    const list = (await t.app.inject({ method: 'GET', url: '/v1/anchors' })).json();
    assert.equal(list.data.length, 1);
    assert.equal(list.data[0].block_merkle_root.length, 64);

    const ots = await getBytes(t, '/v1/anchors/5.ots');
    assert.equal(ots.status, 200);
    assert.equal(ots.headers['content-type'], 'application/vnd.opentimestamps.v1');
    const otsFile = join(dir, `${kind.name}-5.ots`);
    writeFileSync(otsFile, ots.bytes);
    const checkpointFile = join(dir, `${kind.name}-checkpoint-5`);
    proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[0]}` })).json();
    writeFileSync(checkpointFile, proof.anchor_proof.checkpoint);
    assert.equal(toHex(Buffer.from(proof.anchor_proof.ots, 'base64')), toHex(ots.bytes));

    lines.length = 0;
    assert.equal(await runAnchorCheck(otsFile, { headersUrl: esplora.url, checkpoint: checkpointFile }, out), 0, lines.join('\n'));
    assert.ok(lines.some((l) => l.includes(`Bitcoin block ${blockA.height} (${blockA.hash})`)), lines.join('\n'));
    assert.match(lines.at(-1)!, /^verdict: PASS/);

    lines.length = 0;
    assert.equal(await checkProofAnchor(JSON.stringify(proof), { headersUrl: esplora.url }, out), 0, lines.join('\n'));

    const headerFile = join(dir, `${kind.name}-header`);
    writeFileSync(headerFile, toHex(blockB.header));
    lines.length = 0;
    assert.equal(await runAnchorCheck(otsFile, { headers: [headerFile] }, out), 0, lines.join('\n'));
    assert.ok(lines.some((l) => l.includes(`no header given for the attestation(s) at block ${blockA.height}`)), lines.join('\n'));

    // The command itself (built: npm test builds first): the file, then the proof bundle by URL.
    const cli = await ledgerVerify([otsFile, '--headers-url', esplora.url, '--checkpoint', checkpointFile]);
    assert.equal(cli.code, 0, cli.out);
    assert.match(cli.out, new RegExp(`ok   anchor_block      anchor ${kind.name}-5.ots: Bitcoin block ${blockA.height}`));
    assert.match(cli.out, /verdict: PASS: anchor/);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const bundle = await ledgerVerify([`${base}/v1/proof/${ids[0]}`, '--headers-url', esplora.url]);
    assert.equal(bundle.code, 0, bundle.out);
    assert.match(bundle.out, /note anchor_proof\s+checked below/);
    assert.match(bundle.out, /verdict: PASS: anchor of checkpoint 5 verified/);
  });

  test('a tampered .ots, a wrong checkpoint and a swapped header are caught, naming the anchor', async () => {
    const ots = (await getBytes(t, '/v1/anchors/5.ots')).bytes;
    const tampered = ots.slice();
    tampered[tampered.length - 40]! ^= 0x01; // inside the last operations before the attestation
    const file = join(dir, `${kind.name}-tampered.ots`);
    writeFileSync(file, tampered);
    lines.length = 0;
    assert.equal(await runAnchorCheck(file, { headersUrl: esplora.url }, out), 1, lines.join('\n'));
    const cli = await ledgerVerify([file, '--headers-url', esplora.url]);
    assert.equal(cli.code, 1, cli.out);
    assert.match(cli.out, new RegExp(`FAIL anchor_block      anchor ${kind.name}-tampered.ots`));
    assert.ok(lines.some((l) => l.includes('FAIL') && l.includes(`anchor ${kind.name}-tampered.ots`)), lines.join('\n'));
    assert.match(lines.at(-1)!, /^verdict: FAIL/);

    const good = join(dir, `${kind.name}-5.ots`);
    const otherCheckpoint = join(dir, `${kind.name}-other-checkpoint`);
    writeFileSync(otherCheckpoint, 'ledger.test/log\n6\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— ledger.test/log AAAA\n');
    lines.length = 0;
    assert.equal(await runAnchorCheck(good, { headersUrl: esplora.url, checkpoint: otherCheckpoint }, out), 1);
    assert.ok(lines.some((l) => l.startsWith('  FAIL anchor_digest')), lines.join('\n'));

    esplora.tamperHeaders = true;
    lines.length = 0;
    try {
      assert.equal(await runAnchorCheck(good, { headersUrl: esplora.url }, out), 1, lines.join('\n'));
    } finally {
      esplora.tamperHeaders = false;
    }
  });

  test('unreachable calendars: records and the log go on, transparency says since when, and it recovers', async () => {
    const gone = await startCalendarSim(chain);
    const goneUrl = gone.url;
    await gone.close();
    ids.push(...await record(t, secret, 3));
    await integrate();
    clock += 601_000;
    const since = now().toISOString();
    const j = job([goneUrl, `${goneUrl}/other`]);
    assert.equal((await j.tick()).stamped, null);
    let a = await transparency();
    assert.equal(a.calendars_unreachable_since, since);
    assert.match(a.note, /unreachable since/);
    assert.equal(a.anchored_roots, 1, 'what was anchored stays anchored');

    // Nothing else is affected: writes answer 201, the log integrates, proofs read.
    const more = await record(t, secret, 2);
    await integrate();
    const proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${more[1]}` })).json();
    assert.ok(proof.inclusion_proof);
    assert.equal(proof.anchor_proof, null, 'not covered by an anchor yet');

    // Backoff: the next tick a moment later does not try again, and "since" stays the first failure.
    clock += 1_000;
    assert.equal((await j.tick()).stamped, null);
    a = await transparency();
    assert.equal(a.calendars_unreachable_since, since);

    // Calendars back: the next checkpoint is anchored and the note clears.
    clock += 3_600_000;
    const back = job([alice.url, bob.url]);
    assert.equal((await back.tick()).stamped, 10);
    a = await transparency();
    assert.equal(a.calendars_unreachable_since, null);
    assert.equal(a.pending_roots, 1);
    const covering = (await t.app.inject({ method: 'GET', url: `/v1/proof/${more[1]}` })).json();
    assert.equal(covering.anchor_proof.tree_size, 10);
    const old = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[0]}` })).json();
    assert.equal(old.anchor_proof.tree_size, 5, 'the smallest confirmed anchor covering the record');
    const page = (await t.app.inject({ method: 'GET', url: '/v1/anchors?limit=1' })).json();
    assert.equal(page.data[0].tree_size, 10);
    assert.equal(page.next_cursor, 10);
    const next = (await t.app.inject({ method: 'GET', url: `/v1/anchors?limit=1&cursor=${page.next_cursor}` })).json();
    assert.deepEqual(next.data.map((d: { tree_size: number }) => d.tree_size), [5]);
    assert.equal(next.has_more, false);
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/anchors/7.ots' })).statusCode, 404);
  });

  test('a round reads only the pending anchors that are due, oldest first, and polls at most pollsPerRound', async () => {
    const stampNext = async () => {
      ids.push(...await record(t, secret, 1));
      await integrate();
      clock += 601_000;
      return (await job([alice.url, bob.url]).tick()).stamped;
    };
    const stamped = [await stampNext(), await stampNext()];
    assert.deepEqual(stamped, [11, 12]);
    const session = await t.store.anchors.tryAnchorJob();
    assert.ok(session);
    const FAR = '9999-12-31T00:00:00.000Z';
    let pending: StoredAnchor[] = [];
    try {
      pending = await session.due(FAR, 100);
      assert.deepEqual(pending.map((a) => a.treeSize), [10, 11, 12], 'every pending anchor, oldest first');
      assert.deepEqual((await session.due(FAR, 2)).map((a) => a.treeSize), [10, 11]);
      const nextAttempts = pending.map((a) => Date.parse(a.nextAttemptAt ?? ''));
      assert.deepEqual(await session.due(new Date(Math.min(...nextAttempts) - 1).toISOString(), 100), [], 'none due yet');
      clock = Math.max(...nextAttempts) + 1;
    } finally {
      await session.release();
    }
    assert.deepEqual((await job([alice.url, bob.url], { pollsPerRound: 2 }).tick()).stamped, null);
    const attempts = await Promise.all(pending.map(async (a) => (await t.store.anchors.at(a.treeSize))?.attempts));
    assert.deepEqual(attempts, pending.map((a, i) => (i < 2 ? a.attempts + 1 : a.attempts)), 'the two oldest polled, the third waits');
  });

  test('one job at a time: on PostgreSQL a second node gets no hold while one anchors', { skip: kind.name !== 'postgres' }, async () => {
    const held = await t.store.anchors.tryAnchorJob();
    assert.ok(held);
    try {
      assert.deepEqual(await job([alice.url, bob.url]).tick(), { held: false, stamped: null, confirmed: [] });
    } finally {
      await held.release();
    }
    assert.equal((await job([alice.url, bob.url]).tick()).held, true, 'free again once released');
  });
});
