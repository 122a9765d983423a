// The calendar and header clients against the local simulators: digest -> two calendars -> merged
// file -> mined blocks -> upgrade -> verified against headers from the Esplora simulator; and the
// clients' behaviour on unreachable, pending, oversize, malformed and slow answers.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { esploraHeaderSource } from '../../src/verify/bitcoin-headers.ts';
import { calendarAllowed, fetchUpgrade, stampDigest, submitDigest, upgradeFile } from '../../src/anchor/calendar.ts';
import { parseDetachedFile, pendingCalendars, serializeDetachedFile, submittedMessage } from '../../src/method/ots/codec.ts';
import { verifyDetachedFile } from '../../src/method/ots/verify.ts';
import { SimChain } from '../sim/bitcoin-chain.ts';
import { startEsploraSim, type EsploraSim } from '../sim/esplora.ts';
import { startCalendarSim, type CalendarSim } from '../sim/ots-calendar.ts';

const checkpointBody = 'ledger.example/log\n42\nq6mM0Jx2N8l6tZ1b4tFv0n5e1Q2pZp7r0YH3b8Y2m9k=\n';
const digest = new Uint8Array(createHash('sha256').update(checkpointBody).digest());
const fast = { timeoutMs: 2_000 };

let chain: SimChain;
let alice: CalendarSim;
let bob: CalendarSim;
let esplora: EsploraSim;
let closedUrl: string;

before(async () => {
  chain = new SimChain(850_000);
  alice = await startCalendarSim(chain);
  bob = await startCalendarSim(chain);
  esplora = await startEsploraSim(chain);
  const gone = await startCalendarSim(chain);
  closedUrl = gone.url;
  await gone.close();
});

after(async () => {
  await Promise.all([alice.close(), bob.close(), esplora.close()]);
});

beforeEach(() => {
  alice.misbehave = 'none';
  bob.misbehave = 'none';
  esplora.tamperHeaders = false;
});

describe('digest to Bitcoin through two calendars', () => {
  it('stamps, waits, upgrades and verifies end to end', async () => {
    const calendars = [alice.url, bob.url];
    const stamp = await stampDigest(digest, calendars, fast);
    assert.ok(stamp.ok, JSON.stringify(!stamp.ok && stamp.error));
    assert.deepEqual(stamp.value.answered, calendars);
    const file = stamp.value.file;
    assert.deepEqual(file.digest, digest);
    const pending = pendingCalendars(file.timestamp, file.digest);
    assert.deepEqual(pending.map((p) => p.uri).sort(), [...calendars].sort());
    for (const p of pending) assert.equal(p.commitment.length, 4 + 32 + 8, 'time ‖ message ‖ HMAC');
    assert.ok(alice.requests.every((r) => r.accept === 'application/vnd.opentimestamps.v1'));

    // the file is a standard .ots: it serialises and reads back the same
    const bytes = serializeDetachedFile(file);
    assert.ok(bytes.ok);
    const reread = parseDetachedFile(bytes.value);
    assert.ok(reread.ok);
    assert.deepEqual(serializeDetachedFile(reread.value), bytes);

    const allowedCalendars = calendars;
    const early = await upgradeFile(file, { ...fast, allowedCalendars });
    assert.deepEqual(early.stillPending.sort(), [...calendars].sort());
    assert.deepEqual(early.upgraded, []);
    const beforeMining = await verifyDetachedFile(early.file, esploraHeaderSource(esplora.url, fast).headerAt, digest);
    assert.equal(beforeMining.ok, false);
    assert.equal(beforeMining.pending.length, 2);

    const aliceBlock = alice.mine();
    const bobBlock = bob.mine();
    assert.ok(aliceBlock && bobBlock && bobBlock.height === aliceBlock.height + 1);

    const upgraded = await upgradeFile(file, { ...fast, allowedCalendars });
    assert.deepEqual(upgraded.upgraded.sort(), [...calendars].sort());
    assert.deepEqual([upgraded.failures, upgraded.stillPending, upgraded.skipped], [[], [], []]);

    const result = await verifyDetachedFile(upgraded.file, esploraHeaderSource(esplora.url, fast).headerAt, digest);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(result.confirmed.map((c) => [c.height, c.blockHash]).sort(), [
      [aliceBlock.height, aliceBlock.hash],
      [bobBlock.height, bobBlock.hash],
    ]);

    // the upgraded file round-trips too, and a lying header source makes verification fail
    const upgradedBytes = serializeDetachedFile(upgraded.file);
    assert.ok(upgradedBytes.ok);
    const upgradedAgain = parseDetachedFile(upgradedBytes.value);
    assert.ok(upgradedAgain.ok);
    assert.deepEqual(serializeDetachedFile(upgradedAgain.value), upgradedBytes);
    esplora.tamperHeaders = true;
    const lied = await verifyDetachedFile(upgradedAgain.value, esploraHeaderSource(esplora.url, fast).headerAt, digest);
    assert.equal(lied.ok, false);
    assert.equal(lied.unavailable.length, 2);
    assert.ok(lied.unavailable.every((u) => u.error.kind === 'hash_mismatch'));
  });

  it('a calendar not on the allowed list is not asked', async () => {
    const stamp = await stampDigest(digest, [alice.url], fast);
    assert.ok(stamp.ok);
    const before = alice.requests.length;
    const result = await upgradeFile(stamp.value.file, { ...fast, allowedCalendars: ['https://*.calendar.opentimestamps.org'] });
    assert.deepEqual(result.skipped, [alice.url]);
    assert.equal(alice.requests.length, before);
  });
});

describe('calendar client failures', () => {
  const message = submittedMessage(digest, new Uint8Array(16).fill(1));

  it('an unreachable calendar is an error value naming it', async () => {
    const r = await submitDigest(closedUrl, message, fast);
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'unreachable');
    assert.equal(r.error.calendar, closedUrl);
  });

  it('two answers are needed by default; one calendar down fails the stamp unless one answer is enough', async () => {
    const two = await stampDigest(digest, [alice.url, closedUrl], fast);
    assert.ok(!two.ok && two.error.kind === 'not_enough_answers');
    if (!two.ok && two.error.kind === 'not_enough_answers') assert.deepEqual(two.error.answered, [alice.url]);
    const one = await stampDigest(digest, [alice.url, closedUrl], { ...fast, minAnswers: 1 });
    assert.ok(one.ok);
    assert.equal(one.value.failures.length, 1);
    assert.equal(one.value.failures[0]!.kind, 'unreachable');
    assert.deepEqual(pendingCalendars(one.value.file.timestamp, digest).map((p) => p.uri), [alice.url]);
  });

  it('404 says pending for a known commitment and not found for an unknown one', async () => {
    const answer = await submitDigest(bob.url, message, fast);
    assert.ok(answer.ok);
    const [p] = pendingCalendars(answer.value, message);
    assert.ok(p);
    const pending = await fetchUpgrade(bob.url, p.commitment, fast);
    assert.deepEqual(pending, { ok: true, value: { state: 'pending' } });
    const unknown = await fetchUpgrade(bob.url, new Uint8Array(44), fast);
    assert.ok(unknown.ok && unknown.value.state === 'not_found');
    bob.mine();
  });

  it('oversize answers are refused, streamed or declared', async () => {
    for (const mode of ['oversize', 'oversize_declared'] as const) {
      alice.misbehave = mode;
      const r = await submitDigest(alice.url, message, fast);
      assert.ok(!r.ok && r.error.kind === 'too_large', mode);
    }
  });

  it('a truncated answer is malformed; a 500 is an http_status error', async () => {
    alice.misbehave = 'malformed';
    const bad = await submitDigest(alice.url, message, fast);
    assert.ok(!bad.ok && bad.error.kind === 'malformed');
    alice.misbehave = 'server_error';
    const down = await submitDigest(alice.url, message, fast);
    assert.ok(!down.ok && down.error.kind === 'http_status' && down.error.status === 500);
  });

  it('a calendar that never answers times out', async () => {
    alice.misbehave = 'hang';
    const started = Date.now();
    const r = await submitDigest(alice.url, message, { timeoutMs: 300 });
    assert.ok(!r.ok && r.error.kind === 'timeout');
    assert.ok(Date.now() - started < 2_000);
  });

  it('digests over 64 bytes are not sent', async () => {
    const r = await submitDigest(alice.url, new Uint8Array(65), fast);
    assert.ok(!r.ok && r.error.kind === 'malformed');
  });

  it('the upgrade allow-list matches scheme, host pattern and path', () => {
    const patterns = ['https://*.calendar.opentimestamps.org', 'http://127.0.0.1:8080'];
    assert.equal(calendarAllowed('https://alice.btc.calendar.opentimestamps.org', patterns), true);
    assert.equal(calendarAllowed('http://alice.btc.calendar.opentimestamps.org', patterns), false);
    assert.equal(calendarAllowed('https://calendar.opentimestamps.org.evil.example', patterns), false);
    assert.equal(calendarAllowed('https://a.calendar.opentimestamps.org/x', patterns), false);
    assert.equal(calendarAllowed('http://127.0.0.1:8080', patterns), true);
    assert.equal(calendarAllowed('http://127.0.0.1:8081', patterns), false);
    assert.equal(calendarAllowed('not a url', patterns), false);
  });
});

describe('Esplora header source', () => {
  it('fetches a header by height and checks it against its hash', async () => {
    const block = chain.mine([new Uint8Array(100)]);
    const source = esploraHeaderSource(esplora.url + '/', fast);
    const got = await source.blockAt(block.height);
    assert.ok(got.ok);
    assert.equal(got.value.hash, block.hash);
    assert.deepEqual(got.value.header, block.header);
    esplora.tamperHeaders = true;
    const lied = await source.blockAt(block.height);
    assert.ok(!lied.ok && lied.error.kind === 'hash_mismatch');
  });

  it('unknown heights and unreachable sources are error values', async () => {
    const missing = await esploraHeaderSource(esplora.url, fast).blockAt(1);
    assert.ok(!missing.ok && missing.error.kind === 'http_status' && missing.error.status === 404);
    const down = await esploraHeaderSource(closedUrl, fast).blockAt(1);
    assert.ok(!down.ok && down.error.kind === 'unreachable');
    const bad = await esploraHeaderSource(esplora.url, fast).headerByHash('zz');
    assert.ok(!bad.ok && bad.error.kind === 'malformed');
  });
});
