// The background-job loop (src/runtime/job-loop.ts) with stand-in holds: a wake cuts the sleep
// short, a stop ends it mid-sleep (and waits a bounded time for a hung turn), an error in a turn
// does not end the loop, a hold another process has is asked for again after standbyMs, and a
// lost hold is given back and taken anew before the next turn; a first delay puts the first turn off.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobLoop, SingletonJob, type Hold } from '../../src/runtime/job-loop.ts';

const LONG = 60_000;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` holds, polling every few milliseconds; fails after `ms`. */
async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail('the condition never held');
    await delay(2);
  }
}

class FakeHold implements Hold {
  lost = false;
  released = false;
  constructor(readonly n: number) {}
  async release(): Promise<void> {
    this.released = true;
  }
}

/** A store's hold: free, or held by another process (`busy`); hands out numbered holds. */
function holdSource() {
  const taken: FakeHold[] = [];
  const source = {
    busy: false,
    taken,
    take: async () => {
      if (source.busy || taken.some((h) => !h.released && !h.lost)) return null;
      const hold = new FakeHold(taken.length + 1);
      taken.push(hold);
      return hold;
    },
  };
  return source;
}

test('a wake cuts the sleep short; a wake during a turn is not remembered', async () => {
  let turns = 0;
  const loop = new JobLoop({ turn: async () => { turns++; return LONG; }, failed: () => LONG });
  loop.start();
  await until(() => turns === 1);
  loop.wake();
  await until(() => turns === 2);
  await delay(30);
  assert.equal(turns, 2, 'asleep again until the next wake');
  const started = Date.now();
  await loop.halt();
  assert.ok(Date.now() - started < 1_000, 'a stop wakes the sleep it ends');
});

test('a stop mid-sleep ends the loop at once, and no turn follows', async () => {
  let turns = 0;
  const loop = new JobLoop({ turn: async () => { turns++; return LONG; }, failed: () => LONG });
  loop.start();
  await until(() => turns === 1);
  const started = Date.now();
  await loop.halt();
  assert.ok(Date.now() - started < 1_000);
  assert.equal(loop.stopping, true);
  loop.wake();
  await delay(30);
  assert.equal(turns, 1);
});

test('a stop waits for the turn in flight, or at most waitMs for a hung one', async () => {
  let finish: () => void = () => undefined;
  let turns = 0;
  const loop = new JobLoop({
    turn: () => { turns++; return new Promise<number>((resolve) => { finish = () => resolve(LONG); }); },
    failed: () => LONG,
  });
  loop.start();
  await until(() => turns === 1);
  const started = Date.now();
  await loop.halt(50);
  const waited = Date.now() - started;
  assert.ok(waited >= 45 && waited < 1_000, `waited ${waited} ms`);
  let ended = false;
  const whole = loop.halt().then(() => { ended = true; });
  await delay(20);
  assert.equal(ended, false, 'without waitMs the stop waits for the whole turn');
  finish();
  await whole;
  assert.equal(turns, 1);
});

test('an error in a turn does not end the loop: failed notes it and sets the wait', async () => {
  const errors: string[] = [];
  let turns = 0;
  const loop = new JobLoop({
    turn: async () => {
      turns++;
      if (turns <= 2) throw new Error(`turn ${turns} broke`);
      if (turns === 3) throw 'not an Error';
      return LONG;
    },
    failed: (err) => { errors.push(err.message); return 1; },
  });
  loop.start();
  await until(() => turns === 4);
  await loop.halt();
  assert.deepEqual(errors, ['turn 1 broke', 'turn 2 broke', 'not an Error']);
});

test('a turn answering 0 runs the next at once, after letting other work in', async () => {
  let turns = 0;
  let timerRan = false;
  setTimeout(() => { timerRan = true; }, 0);
  const loop = new JobLoop({ turn: async () => (++turns < 200 ? 0 : LONG), failed: () => LONG });
  loop.start();
  await until(() => turns === 200);
  await loop.halt();
  assert.ok(timerRan);
});

test('a loop started again after a stop runs anew', async () => {
  let turns = 0;
  const loop = new JobLoop({ turn: async () => { turns++; return LONG; }, failed: () => LONG });
  loop.start();
  loop.start();
  await until(() => turns === 1);
  await delay(20);
  assert.equal(turns, 1, 'a second start of a running loop is ignored');
  await loop.halt();
  loop.start();
  assert.equal(loop.stopping, false);
  await until(() => turns === 2);
  await loop.halt();
});

/** A singleton job whose turns note the number of the hold they ran with, and sleep long. */
function recordingJob(take: () => Promise<FakeHold | null>) {
  const turnsWith: number[] = [];
  const job = new SingletonJob<FakeHold>({
    take,
    turn: async (hold) => { turnsWith.push(hold.n); return LONG; },
    standbyMs: 5,
    failed: () => LONG,
  });
  return { job, turnsWith };
}

test('a singleton job asks again after standbyMs while another process holds, then works with the hold', async () => {
  const source = holdSource();
  source.busy = true;
  let asked = 0;
  const { job, turnsWith } = recordingJob(() => { asked++; return source.take(); });
  job.start();
  const heldNow = () => job.held?.n ?? null;
  await until(() => asked >= 3);
  assert.equal(heldNow(), null);
  assert.deepEqual(turnsWith, []);
  source.busy = false;
  await until(() => turnsWith.length === 1);
  assert.equal(heldNow(), 1);
  await job.stop();
  assert.equal(heldNow(), null);
  assert.equal(source.taken[0]!.released, true, 'a stop gives the hold back');
});

test('a lost hold is given back and taken anew before the next turn', async () => {
  const source = holdSource();
  const { job, turnsWith } = recordingJob(source.take);
  job.start();
  await until(() => turnsWith.length === 1);
  source.taken[0]!.lost = true;
  job.wake();
  await until(() => turnsWith.length === 2);
  assert.deepEqual(turnsWith, [1, 2]);
  assert.equal(source.taken[0]!.released, true);
  await job.stop();
});

test('after an error the hold is given back and taken anew; with onError keep it is kept', async () => {
  for (const onError of ['release', 'keep'] as const) {
    const source = holdSource();
    const turnsWith: number[] = [];
    const heldWhenFailed: (number | undefined)[] = [];
    const job: SingletonJob<FakeHold> = new SingletonJob<FakeHold>({
      take: source.take,
      turn: async (hold) => {
        turnsWith.push(hold.n);
        if (turnsWith.length === 1) throw new Error('the database went away');
        return LONG;
      },
      standbyMs: 5,
      failed: () => { heldWhenFailed.push(job.held?.n); return 1; },
      onError,
    });
    job.start();
    await until(() => turnsWith.length === 2);
    assert.deepEqual(heldWhenFailed, [1], 'failed runs with the hold still held');
    assert.deepEqual(turnsWith, onError === 'release' ? [1, 2] : [1, 1], onError);
    await job.stop();
  }
});

test('hold() takes the hold for work outside the loop, and the loop then uses it', async () => {
  const source = holdSource();
  const { job, turnsWith } = recordingJob(source.take);
  const hold = await job.hold();
  assert.equal(hold?.n, 1);
  assert.equal(await job.hold(), hold);
  job.start();
  await until(() => turnsWith.length === 1);
  assert.deepEqual(turnsWith, [1]);
  await job.stop();
  assert.equal(source.taken.length, 1);
});

test('a first delay puts the first turn off; a stop during it ends the loop without a turn', async () => {
  let turns = 0;
  const loop = new JobLoop({ turn: async () => { turns++; return LONG; }, failed: () => LONG });
  loop.start(150);
  await delay(60);
  assert.equal(turns, 0, 'no turn before the first delay has passed');
  await until(() => turns === 1);

  let quiet = 0;
  const stopped = new JobLoop({ turn: async () => { quiet++; return LONG; }, failed: () => LONG });
  stopped.start(LONG);
  await stopped.halt();
  assert.equal(quiet, 0);
  await loop.halt();
});
