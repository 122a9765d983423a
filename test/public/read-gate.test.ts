// The read gate (docs/operations.md, "Bounds on public reads"): public reads at once per client
// and in all, a short bounded wait, then 429 (the client's bound) or 503 (the service's), each
// with Retry-After and the 2.7 body, on every public read route; writes never wait behind it,
// and on PostgreSQL the reads hold connections of their own pool, never the writes'.
// A turn is held by taking it from the gate itself, as a long read would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ReadGate } from '../../src/api/read-gate.ts';
import { runAsPublicRead } from '../../src/runtime/read-scope.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, postMany } from './helpers.ts';

/** inject()'s requests come from this address. */
const INJECT_IP = '127.0.0.1';

type Turn = { leave: () => void };

async function hold(gate: ReadGate, client: string): Promise<Turn> {
  const turn = await gate.enter(client);
  assert.ok(turn.ok, `a turn for ${client}`);
  return turn;
}

const DECISION = { symbol: 'AAPL', action: 'BUY', quantity: 1 };

await forEachStore('the read gate', (kind) => {
  let t: TestApp;
  let handle: string;
  let secret: string;
  let recordId = '';
  before(async () => {
    t = await testApp(await kind.open(), {
      // The gate's own bounds: no read cache (which answers a repeated read without a turn while reads queue).
      // A refusal after its 200 ms in the queue is not held any longer (the tarpit's delay is the same).
      env: { LEDGER_READ_CACHE_MB: '0', LEDGER_READ_CONCURRENCY: '2', LEDGER_READ_CONCURRENCY_PER_CLIENT: '1', LEDGER_READ_QUEUE: '4', LEDGER_READ_QUEUE_WAIT_MS: '200', LEDGER_READ_REFUSAL_DELAY_MS: '200' },
    });
    const a = await t.agent();
    handle = a.handle;
    secret = a.secret;
    [recordId = ''] = await postMany(t, a.secret, 2, (i) => ({ ...DECISION, quantity: i + 1 }));
  });
  after(() => closeTestApp(t, kind));

  /** One URL of each kind of public read: the API, the site, badges, the texts, the OpenAPI document. */
  const reads = () => [
    `/v1/agents/${handle}`, `/v1/agents/${handle}/chain`, `/v1/proof/${recordId}`, '/v1/ledger', `/v1/export?agent=${handle}`,
    `/v1/agents/${handle}/performance/outcomes?limit=500&format=csv`, '/v1/transparency', '/v1/agents', '/v1/agents?format=csv&sort=records',
    '/', '/agents', `/agents/${handle}`, `/badge/${handle}.svg`, '/llms.txt', '/llms-full.txt', '/v1/openapi.json',
  ];

  test('past its own bound a client waits, then gets 429 rate_limit_exceeded with Retry-After, on every public read', async () => {
    const turn = await hold(t.gate, INJECT_IP);
    try {
      for (const url of reads()) {
        const res = await get(t, url);
        assertError(res, 429, 'rate_limit_exceeded');
        assert.equal((JSON.parse(res.body) as { error: { type: string } }).error.type, 'rate_limit_error', url);
        assert.equal(res.headers['retry-after'], '1', url);
      }
    } finally {
      turn.leave();
    }
    for (const url of reads()) assert.equal((await get(t, url)).statusCode, 200, `${url} once the turn is free`);
  });

  test('a static asset takes no turn: a page\'s scripts, styles and images load while its client\'s reads are all taken', async () => {
    const turn = await hold(t.gate, INJECT_IP);
    try {
      const page = await get(t, '/');
      assert.equal(page.statusCode, 429, 'the page itself waits for a turn');
      for (const url of ['/assets/site.css', '/assets/favicon.svg', '/docs/api/redoc.standalone.js']) {
        assert.equal((await get(t, url)).statusCode, 200, url);
      }
    } finally {
      turn.leave();
    }
  });

  test('a read that waits gets its turn as soon as one ends', async () => {
    const turn = await hold(t.gate, INJECT_IP);
    const waiting = get(t, `/v1/agents/${handle}`);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(t.gate.load, { running: 1, waiting: 1 });
    turn.leave();
    assert.equal((await waiting).statusCode, 200);
  });

  test('past the service\'s bound a client gets 503 service_unavailable with Retry-After; writes still succeed', async () => {
    const turns = [await hold(t.gate, '192.0.2.1'), await hold(t.gate, '192.0.2.2')];
    try {
      for (const url of reads()) {
        const res = await get(t, url);
        assertError(res, 503, 'service_unavailable');
        assert.equal(res.headers['retry-after'], '1', url);
      }
      const written = await Promise.all(Array.from({ length: 5 }, (_, i) => postDecision(t, secret, { ...DECISION, quantity: i + 1 })));
      assert.deepEqual(written.map((w) => w.statusCode), Array(5).fill(201), 'writes do not pass through the read gate');
    } finally {
      for (const turn of turns) turn.leave();
    }
    assert.equal((await get(t, '/v1/ledger')).statusCode, 200);
  });

  test('a turn ends when its response is sent: many reads in a row never leak one', async () => {
    for (let i = 0; i < 20; i++) assert.equal((await get(t, reads()[i % reads().length]!)).statusCode, 200);
    assert.deepEqual(t.gate.load, { running: 0, waiting: 0 });
  });

  test('the refusals are counted on /metrics', async () => {
    const m = await testApp(await kind.open(), { env: { LEDGER_METRICS: 'true', LEDGER_READ_CACHE_MB: '0', LEDGER_READ_CONCURRENCY_PER_CLIENT: '1', LEDGER_READ_QUEUE_WAIT_MS: '0', LEDGER_READ_REFUSAL_DELAY_MS: '0' } });
    try {
      const turn = await hold(m.gate, INJECT_IP);
      assert.equal((await get(m, '/v1/ledger')).statusCode, 429);
      turn.leave();
      const text = (await get(m, '/metrics')).body;
      assert.match(text, /ledger_read_gate_refused_total\{bound="client"\} 1\b/);
      assert.match(text, /ledger_read_gate_limit\{bound="concurrency"\} 8\b/);
      assert.match(text, /ledger_read_gate_limit\{bound="per_client"\} 1\b/);
      assert.match(text, /ledger_read_gate_reads\{state="running"\} 0\b/);
      assert.match(text, /ledger_read_gate_reads\{state="held"\} 0\b/);
      assert.match(text, /ledger_read_gate_limit\{bound="refusals_held"\} 1024\b/);
      if (kind.name === 'postgres') assert.match(text, /ledger_postgres_read_pool_connections\{state="total"\}/);
    } finally {
      await m.close();
      await m.store.close();
    }
  });
});

await forEachStore('the read pool', (kind) => {
  test('with every connection the public reads may hold taken, writes still find theirs', { skip: kind.name !== 'postgres' && 'SQLite has no pool' }, async () => {
    const store = openStore(await kind.freshUrl(), { readPoolSize: 1 }) as PostgresStore;
    await store.migrate();
    const t = await testApp(store);
    const a = await t.agent();
    const held = await runAsPublicRead(() => store.pool.connect());
    try {
      const written = await Promise.all(Array.from({ length: 12 }, (_, i) => postDecision(t, a.secret, { ...DECISION, quantity: i + 1 })));
      assert.deepEqual(written.map((w) => w.statusCode), Array(12).fill(201));
      assert.equal(store.gauges().readPool?.waiting, 0);
      // A public read now waits for the read pool's one connection, not for the writes'.
      const reading = get(t, `/v1/agents/${a.handle}`);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(store.gauges().readPool?.waiting, 1);
      held.release();
      assert.equal((await reading).statusCode, 200);
    } finally {
      await closeTestApp(t, kind);
    }
  });
});

describe('read bounds configuration', () => {
  test('the defaults docs/operations.md states', () => {
    assert.deepEqual(loadConfig({}).readBounds, { concurrency: 8, perClient: 4, queue: 32, waitMs: 3000, refusalDelayMs: 1000, refusalsHeld: 1024, poolSize: 4, loopSharePercent: 25, cacheBytes: 0, threads: 1, threadHeapMb: 256 });
  });

  test('a per-client bound above the global one stops the start', () => {
    assert.throws(() => loadConfig({ LEDGER_READ_CONCURRENCY: '2', LEDGER_READ_CONCURRENCY_PER_CLIENT: '3' }), /LEDGER_READ_CONCURRENCY_PER_CLIENT/);
  });
});

describe('the read gate\'s queue', () => {
  test('a client waits with at most its own bound of reads; past that, or past the queue, it is refused at once', async () => {
    const gate = new ReadGate({ concurrency: 2, perClient: 1, queue: 2, waitMs: 60_000, refusalDelayMs: 0, refusalsHeld: 1 });
    const first = await hold(gate, 'a');
    const waiting = gate.enter('a');
    assert.deepEqual(await gate.enter('a'), { ok: false, refusal: 'client' }, 'one waiting read per client at most');
    const other = await hold(gate, 'b');
    const queued = gate.enter('c'); // the service is full: c waits
    assert.deepEqual(await gate.enter('d'), { ok: false, refusal: 'global' }, 'the queue holds 2');
    assert.deepEqual(gate.load, { running: 2, waiting: 2 });
    first.leave();
    const next = await waiting;
    assert.ok(next.ok, 'a\'s waiting read runs once a\'s first ends');
    other.leave();
    assert.ok((await queued).ok);
    assert.deepEqual(gate.refused, { client: 1, global: 1 });
  });
});

describe('the tarpit: refusals of public reads are held before they are sent', () => {
  const DELAY_MS = 300;
  let store: LedgerStore;
  let t: TestApp;
  before(async () => {
    store = openStore('sqlite::memory:');
    await store.migrate();
    t = await testApp(store, {
      env: { LEDGER_READ_CACHE_MB: '0', LEDGER_READ_CONCURRENCY_PER_CLIENT: '1', LEDGER_READ_QUEUE_WAIT_MS: '0', LEDGER_READ_REFUSAL_DELAY_MS: String(DELAY_MS), LEDGER_READ_REFUSALS_HELD: '2' },
    });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  /** A request's answer and how long it took (a timer never fires early, so the lower bound is exact). */
  async function timed<T>(request: Promise<T>): Promise<{ answer: T; ms: number }> {
    const started = performance.now();
    const answer = await request;
    return { answer, ms: performance.now() - started };
  }

  test('a read refused at once by its client\'s bound gets its 429 only after the delay; meanwhile it is held, and counted', async () => {
    const turn = await hold(t.gate, INJECT_IP);
    try {
      const refusal = timed(get(t, '/v1/ledger'));
      await until(() => t.gate.tarpit.held === 1);
      const { answer, ms } = await refusal;
      assertError(answer, 429, 'rate_limit_exceeded');
      assert.equal(answer.headers['retry-after'], '1');
      assert.ok(ms >= DELAY_MS - 1, `answered after ${ms} ms, not before ${DELAY_MS}`);
      assert.equal(t.gate.tarpit.held, 0);
    } finally {
      turn.leave();
    }
  });

  test('the per-minute limit\'s refusals are held the same way', async () => {
    const limited = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '1', LEDGER_READ_REFUSAL_DELAY_MS: String(DELAY_MS) } });
    try {
      assert.equal((await get(limited, '/v1/transparency')).statusCode, 200);
      const { answer, ms } = await timed(get(limited, '/v1/transparency'));
      assertError(answer, 429, 'rate_limit_exceeded');
      assert.ok(ms >= DELAY_MS - 1, `answered after ${ms} ms, not before ${DELAY_MS}`);
    } finally {
      await limited.close();
    }
  });

  test('past the bound of refusals held at once, a refused read\'s connection is closed without an answer; a client that leaves frees its place', async () => {
    const held = await testApp(store, {
      env: { LEDGER_READ_CACHE_MB: '0', LEDGER_READ_CONCURRENCY_PER_CLIENT: '1', LEDGER_READ_QUEUE_WAIT_MS: '0', LEDGER_READ_REFUSAL_DELAY_MS: '60000', LEDGER_READ_REFUSALS_HELD: '2' },
    });
    const url = await held.app.listen({ host: '127.0.0.1', port: 0 });
    const turn = await hold(held.gate, '127.0.0.1');
    const clients = Array.from({ length: 2 }, () => new AbortController());
    try {
      const parked = clients.map((c) => fetch(`${url}/v1/ledger`, { signal: c.signal }).catch((error: Error) => error));
      await until(() => held.gate.tarpit.held === 2);
      const third = await fetch(`${url}/v1/ledger`).then((res) => `answered ${res.status}`, (error: Error) => error);
      assert.ok(third instanceof Error, `the third refusal: ${String(third)}`);
      assert.equal(held.gate.tarpit.held, 2, 'the two held refusals are still held');
      for (const c of clients) c.abort();
      await Promise.all(parked);
      await until(() => held.gate.tarpit.held === 0);
    } finally {
      turn.leave();
      await held.close();
    }
  });
});

/** Waits (polling every 5 ms, at most 5 s) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 1000) throw new Error(`still not so after 5 s: ${condition.toString()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
