// The read pacer (src/runtime/loop-share.ts): turns at once while the event loop has room, held
// while it is busy past the share (at most maxWaitMs), never held at a share of 1, and a paced
// stream yields every line in order and closes its source when the reader stops early; a read
// thread's pacer, through the memory it shares with the serving thread's, paces by its writes.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { LoopShare, pacedLines, SharedPacing } from '../../src/runtime/loop-share.ts';

/** Keeps the event loop busy about `share` of the time (a timer that spins), until stopped. */
function keepBusy(share: number): () => void {
  const timer = setInterval(() => {
    const until = performance.now() + 10 * share;
    while (performance.now() < until) { /* spin */ }
  }, 10);
  return () => clearInterval(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a turn is given at once while the loop is idle', async () => {
  const pacer = new LoopShare({ share: 0.9, maxWaitMs: 1_000, writeWindowMs: Infinity });
  try {
    await sleep(300); // the loading of this file's modules is over
    await pacer.turn();
    await sleep(150);
    await pacer.turn();
    assert.equal(pacer.stats.immediate, 2);
    assert.equal(pacer.stats.waited, 0);
  } finally {
    pacer.close();
  }
});

test('while the loop is busy past the share, a turn waits, at most maxWaitMs; once it cools, turns are immediate again', async () => {
  const pacer = new LoopShare({ share: 0.3, maxWaitMs: 300, writeWindowMs: Infinity });
  const stop = keepBusy(0.9);
  try {
    await pacer.turn(); // starts the sampling
    await sleep(400);
    assert.ok(pacer.busyShare > 0.3, `busy share ${pacer.busyShare}`);
    const asked = performance.now();
    await pacer.turn();
    const waited = performance.now() - asked;
    assert.ok(waited >= 250, `waited ${waited} ms`);
    assert.equal(pacer.stats.waited, 1);
  } finally {
    stop();
  }
  try {
    await sleep(600);
    await pacer.turn();
    assert.equal(pacer.stats.waited, 1, 'a cool loop gives the turn at once');
    assert.ok(pacer.busyShare < 0.3, `busy share ${pacer.busyShare}`);
  } finally {
    pacer.close();
  }
});

test('waiting turns are given oldest first', async () => {
  const pacer = new LoopShare({ share: 0.3, maxWaitMs: 400, writeWindowMs: Infinity });
  const stop = keepBusy(0.9);
  try {
    await pacer.turn();
    await sleep(300);
    const order: number[] = [];
    await Promise.all([0, 1, 2].map((i) => pacer.turn().then(() => order.push(i))));
    assert.deepEqual(order, [0, 1, 2]);
  } finally {
    stop();
    pacer.close();
  }
});

test('at a share of 1 a turn never waits, however busy the loop', async () => {
  const pacer = new LoopShare({ share: 1, maxWaitMs: 1_000, writeWindowMs: Infinity });
  const stop = keepBusy(0.9);
  try {
    await sleep(200);
    for (let i = 0; i < 5; i++) await pacer.turn();
    assert.equal(pacer.stats.waited, 0);
  } finally {
    stop();
    pacer.close();
  }
});

test('a paced stream yields every line in order, and closes its source when the reader stops early', async () => {
  let closed = false;
  async function* source() {
    try {
      for (let i = 0; i < 5; i++) yield `line ${i}\n`;
    } finally {
      closed = true;
    }
  }
  const all: string[] = [];
  for await (const line of pacedLines(source())) all.push(line);
  assert.deepEqual(all, [0, 1, 2, 3, 4].map((i) => `line ${i}\n`));
  assert.ok(closed);

  closed = false;
  for await (const line of pacedLines(source())) if (line === 'line 1\n') break;
  assert.ok(closed, 'the source is closed when the reader stops early');
});

test('with no write seen within the window a turn never waits, however busy the loop; a write brings the pacing back', async () => {
  const pacer = new LoopShare({ share: 0.3, maxWaitMs: 300, writeWindowMs: 500 });
  const stop = keepBusy(0.9);
  try {
    await pacer.turn();
    await sleep(400);
    assert.ok(pacer.busyShare > 0.3, `busy share ${pacer.busyShare}`);
    for (let i = 0; i < 5; i++) await pacer.turn();
    assert.equal(pacer.stats.waited, 0, 'a reader alone is not paced');
    pacer.writeSeen();
    const asked = performance.now();
    await pacer.turn();
    assert.ok(performance.now() - asked >= 250, 'a write nearby paces the reads again');
    assert.equal(pacer.stats.waited, 1);
    await sleep(600);
    await pacer.turn();
    assert.equal(pacer.stats.waited, 1, 'once the window has passed, turns are immediate again');
  } finally {
    stop();
    pacer.close();
  }
});

test('a pacer that joins another\'s pacing memory is paced by that one\'s writes, and counts its waits into it', async () => {
  const serving = new LoopShare({ share: 0.3, maxWaitMs: 300, writeWindowMs: 500 });
  const reading = new LoopShare({ share: 0.3, maxWaitMs: 300, writeWindowMs: 500 });
  reading.join(serving.pacing);
  const stop = keepBusy(0.9);
  try {
    await reading.turn();
    await sleep(400);
    await reading.turn();
    assert.equal(reading.stats.waited, 0, 'no write seen anywhere: not paced');
    serving.writeSeen();
    await reading.turn();
    assert.equal(reading.stats.waited, 1, 'a write seen by the other pacer paces this one');
    assert.equal(serving.pacing.turnsWaited, 1, 'the wait is counted where both see it');
  } finally {
    stop();
    serving.close();
    reading.close();
  }
});

test('the pacing memory is the same in another thread: a write noted there is seen here, and waits counted there are counted here', async () => {
  const pacing = new SharedPacing();
  assert.equal(pacing.sinceLastWrite(), Infinity);
  const worker = new Worker(`
    const { workerData, parentPort } = require('node:worker_threads');
    const cells = new BigInt64Array(workerData);
    Atomics.store(cells, 0, BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)));
    Atomics.add(cells, 1, 2n);
    parentPort.postMessage('done');`, { eval: true, workerData: pacing.memory });
  try {
    await once(worker, 'message');
    assert.ok(pacing.sinceLastWrite() < 1_000, `since the last write: ${pacing.sinceLastWrite()} ms`);
    assert.equal(pacing.turnsWaited, 2);
  } finally {
    await worker.terminate();
  }
});
