// The verifier thread (src/ledger/verifier-thread.ts) answers exactly as a check on the calling
// thread would, job for job and in order, before its worker is up, while it runs, for jobs still
// out when it stops, and when its worker is too late; and its worker yields the CPU to the event loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { VerifierThread, warnWhenLate, type Ed25519Verifier } from '../../src/ledger/verifier-thread.ts';
import { packJobs, unpackJobs } from '../../src/ledger/verify-batch.ts';
import { newKeypair, sign } from './helpers.ts';

type Job = { publicKey: Uint8Array; message: string; signature: Uint8Array };

/** Signed messages (by @noble/ed25519), half of them spoiled in one of several ways. */
function jobs(count: number): Job[] {
  const keys = [newKeypair(), newKeypair(), newKeypair()];
  return Array.from({ length: count }, (_, i) => {
    const key = keys[i % keys.length]!;
    const message = `decision ${i} — café ${'x'.repeat(i % 50)}`;
    const job = { publicKey: Buffer.from(key.publicKey, 'base64url'), message, signature: Buffer.from(sign(message, key), 'base64url') };
    switch (i % 6) {
      case 1: return { ...job, message: `${message}!` };
      case 3: return { ...job, publicKey: Buffer.from(keys[(i + 1) % keys.length]!.publicKey, 'base64url') };
      case 5: return { ...job, signature: job.signature.subarray(0, 63) };
      default: return job;
    }
  });
}

const expected = (all: Job[]) => all.map((j) => verifyRaw(j.publicKey, Buffer.from(j.message, 'utf8'), j.signature));
const run = (verify: Ed25519Verifier, all: Job[]) => Promise.all(all.map((j) => verify(j.publicKey, j.message, j.signature)));

test('checks on the worker give the same answers as checks here, in order, across batches', async () => {
  const verifier = new VerifierThread().warmUp();
  await verifier.whenReady;
  const all = jobs(300);
  const want = expected(all);
  assert.deepEqual(want.filter(Boolean).length, 150, 'half verify');
  assert.deepEqual(await run(verifier.verify, all), want);
  const [first, second] = await Promise.all([run(verifier.verify, all.slice(0, 120)), run(verifier.verify, all.slice(120))]);
  assert.deepEqual([...first, ...second], want);
  await verifier.close();
});

test('before its worker is up the verifier checks here; jobs out when it stops are still answered', async () => {
  const verifier = new VerifierThread();
  const all = jobs(60);
  assert.deepEqual(await run(verifier.verify, all), expected(all), 'answered before the worker is ready');
  await verifier.whenReady;
  const out = run(verifier.verify, all);
  await verifier.close();
  assert.deepEqual(await out, expected(all));
  assert.deepEqual(await run(verifier.verify, all), expected(all), 'after close, checks run here');
});

test('a packed batch unpacks to the same keys, signatures and UTF-8 messages', () => {
  const all = jobs(12).filter((j) => j.signature.length === 64);
  all.push({ ...all[0]!, message: '' }, { ...all[0]!, message: 'é😀\u2028' });
  const unpacked = unpackJobs(packJobs(all));
  assert.equal(unpacked.length, all.length);
  unpacked.forEach((u, i) => {
    assert.deepEqual([...u.publicKey], [...all[i]!.publicKey]);
    assert.deepEqual([...u.signature], [...all[i]!.signature]);
    assert.equal(Buffer.from(u.message).toString('utf8'), all[i]!.message);
  });
});

test('a verifier closed before its worker is up says so instead of leaving waiters hanging', async () => {
  const verifier = new VerifierThread().warmUp();
  await verifier.close();
  await assert.rejects(verifier.whenReady, /stopped before it was ready/);
  const all = jobs(6);
  assert.deepEqual(await run(verifier.verify, all), expected(all), 'checks still run, here');
});

test('a batch the worker has not answered in time is checked here, and its late answer is ignored', async () => {
  const late: number[] = [];
  const verifier = new VerifierThread({
    lateAfterMs: 20,
    onLate: (jobs) => late.push(jobs),
    workerEntry: new URL('./fixtures/late-verifier.ts', import.meta.url),
  }).warmUp();
  try {
    await verifier.whenReady;
    const all = jobs(30);
    assert.deepEqual(await run(verifier.verify, all), expected(all), 'the late worker says all verify; the answers here are right');
    const sent = all.filter((j) => j.signature.length === 64).length; // a short signature never leaves the event loop
    assert.equal(late.reduce((a, b) => a + b, 0), sent, 'every check sent was reported late');
    await new Promise((resolve) => setTimeout(resolve, 200)); // the worker's wrong answers arrive, to no one
    assert.deepEqual(await run(verifier.verify, all.slice(0, 6)), expected(all.slice(0, 6)));
  } finally {
    await verifier.close();
  }
});

test('late checks are reported at most once a minute, with how many ran here since the last report', () => {
  const said: string[] = [];
  let clock = 1_000_000;
  const onLate = warnWhenLate((message) => said.push(message), 60_000, () => clock);
  onLate(5);
  onLate(7);
  clock += 59_999;
  onLate(1);
  assert.equal(said.length, 1);
  clock += 1;
  onLate(2);
  assert.deepEqual(said.map((m) => Number(m.split(' ')[0])), [5, 10]);
  assert.match(said[0]!, /verifier thread answered late/);
});
