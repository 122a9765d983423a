// Dependency faults under write load, against the real service (`ledger serve`) on a PostgreSQL and
// a Redis of the test's own: PostgreSQL restarted, its connections terminated, made silent; Redis
// stopped and started again. For each: what clients see (201s, or 503 service_unavailable with
// Retry-After; never a 500, never a crash), that nothing acknowledged is lost, and how long the
// service takes to write again once the dependency is back (printed; docs/operations.md).
// The disk-full case (SQLite on a small tmpfs) is in disk-full.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { Cluster, type ClusterNode } from '../support/cluster.ts';
import {
  acknowledged, assertAcknowledgedDurable, assertOnlyUnavailable, firstAcknowledgedAfter, seconds, summary, WriteLoad, type LoadAgent, type Outcome,
} from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { repeated } from '../support/long.ts';

/** How often each fault is injected: once in CI, more in the long variant (LEDGER_TEST_LONG=1). */
const ROUNDS = 10;

const skip = skipUnlessAble('postgres-server', 'redis-server');

/** Short bounds, so that the silent database costs seconds, not the defaults' half minute. */
const BOUNDS = { connect_timeout: '2', query_timeout: '2000', statement_timeout: '1500', idle_in_transaction_session_timeout: '3000', append_lock_timeout: '1000' };
const QUERY_TIMEOUT_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When `check` first holds (polled every 25 ms), or null after `ms`. */
async function when(check: () => Promise<boolean> | boolean, ms = 30_000): Promise<number | null> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return Date.now();
    await sleep(25);
  }
  return null;
}

async function readyz(node: ClusterNode): Promise<{ status: number; body: { status?: string }; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${node.node.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() as { status?: string }, ms: Date.now() - started };
}

describe('dependency faults under write load', { skip }, () => {
  let cluster: Cluster;
  let node: ClusterNode;
  let agents: LoadAgent[];

  before(async () => {
    cluster = await Cluster.start({ nodes: 1, databaseParams: BOUNDS });
    node = cluster.nodes[0]!;
    agents = await Promise.all([1, 2].map(() => cluster.agent('deps')));
  });
  after(async () => {
    await cluster?.stop();
  });

  const load = () => new WriteLoad(agents.flatMap((agent) => [0, 1].map(() => ({ agent, target: () => node.target }))), { pauseMs: 25 }).start();

  /** What every fault must leave: the node alive and uncrashed, every answer a 201 or a proper 503, every 201 durable. */
  async function assertSurvived(outcomes: Outcome[]): Promise<void> {
    assert.ok(node.node.running, 'the node is still running');
    assert.doesNotMatch(node.node.output, /Unhandled|uncaught|FATAL ERROR|\[ioredis\]/i, 'nothing unhandled, nothing outside the JSON log');
    assertOnlyUnavailable(outcomes);
    await assertAcknowledgedDurable(cluster.store, agents, outcomes);
  }

  test('PostgreSQL restarted (pg_ctl restart -m fast): 503s while it is down, writes again at once when it is back', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(20);
    const downAt = Date.now();
    await cluster.pg!.stop('fast');
    await sleep(1_000);
    await cluster.pg!.start();
    const upAt = Date.now();
    const recovered = await when(() => firstAcknowledgedAfter(writes.outcomes, upAt) !== null);
    await writes.acknowledgedAtLeast(10);
    const outcomes = await writes.stop();
    const during = outcomes.filter((o) => o.sentAt >= downAt && o.sentAt < upAt);
    t.diagnostic(`PostgreSQL restart: down ${seconds(upAt - downAt)}; clients meanwhile saw ${summary(during)}; ` +
      `writes recorded again ${recovered === null ? 'never' : seconds(recovered - upAt)} after it was back`);
    assert.ok(recovered !== null, 'writes are recorded again');
    assert.ok(during.some((o) => o.status === 503), 'writes sent while it was down answered 503');
    await assertSurvived(outcomes);
  }));

  test('its connections terminated (pg_terminate_backend, three times): the requests on them answer 503, the rest go on', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(20);
    let terminated = 0;
    for (let i = 0; i < 3; i++) {
      const rows = await cluster.pg!.query<{ n: string }>(`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name = $1`, [node.target.name]);
      terminated += Number(rows[0]!.n);
      await sleep(300);
    }
    const lastAt = Date.now();
    const recovered = await when(() => firstAcknowledgedAfter(writes.outcomes, lastAt) !== null);
    await writes.acknowledgedAtLeast(10);
    const outcomes = await writes.stop();
    t.diagnostic(`pg_terminate_backend x 3 (${terminated} sessions): clients saw ${summary(outcomes)}; ` +
      `the next write after the last termination recorded in ${recovered === null ? 'never' : seconds(recovered - lastAt)}`);
    assert.ok(terminated > 0, 'sessions were terminated');
    assert.ok(recovered !== null);
    await assertSurvived(outcomes);
  }));

  test('made silent (the network forwards nothing): writes answer 503 within the query timeout, /readyz 503 within 2 s, and writes resume when it answers', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(20);
    const silentAt = Date.now();
    node.database.stall();
    await sleep(500);
    const ready = await readyz(node);
    await sleep(QUERY_TIMEOUT_MS + 1_500);
    node.database.restore();
    const backAt = Date.now();
    const recovered = await when(() => firstAcknowledgedAfter(writes.outcomes, backAt) !== null);
    await writes.acknowledgedAtLeast(10);
    const outcomes = await writes.stop();
    const during = outcomes.filter((o) => o.sentAt >= silentAt && o.answeredAt <= backAt);
    const slowest = Math.max(...outcomes.map((o) => o.answeredAt - o.sentAt));
    t.diagnostic(`silent PostgreSQL: clients saw ${summary(during)}, the slowest answer in ${seconds(slowest)}; /readyz ${ready.status} in ${seconds(ready.ms)}; ` +
      `writes recorded again ${recovered === null ? 'never' : seconds(recovered - backAt)} after it answered`);
    assert.equal(ready.status, 503);
    assert.ok(ready.ms < 3_000, `/readyz answered in ${ready.ms} ms`);
    assert.ok(during.length > 0 && during.every((o) => o.status === 503), summary(during));
    assert.ok(slowest < 2 * QUERY_TIMEOUT_MS + 2_000, `no request waited past the bounds (${seconds(slowest)})`);
    assert.ok(recovered !== null);
    await assertSurvived(outcomes);
  }));

  test('Redis stopped and started again: writes carry on (each process counts its own budget), /readyz says degraded, then ready', repeated(ROUNDS, async (t: TestContext) => {
    const fallbacksLogged = () => node.node.output.match(/Redis is unreachable/g)?.length ?? 0;
    const loggedBefore = fallbacksLogged();
    const writes = load();
    await writes.acknowledgedAtLeast(20);
    const stoppedAt = Date.now();
    await cluster.redis!.stop();
    const degraded = await when(async () => (await readyz(node)).body.status === 'degraded', 10_000);
    await writes.acknowledgedAtLeast(20);
    await cluster.redis!.start();
    const startedAt = Date.now();
    const ready = await when(async () => (await readyz(node)).body.status === 'ready', 30_000);
    await writes.acknowledgedAtLeast(10);
    const outcomes = await writes.stop();
    const during = outcomes.filter((o) => o.sentAt >= stoppedAt && o.answeredAt <= startedAt);
    t.diagnostic(`Redis outage: clients saw ${summary(during)}; /readyz degraded ${degraded === null ? 'never' : seconds(degraded - stoppedAt)} after the stop; ` +
      `shared budgets again ${ready === null ? 'never' : seconds(ready - startedAt)} after Redis was back`);
    assert.ok(degraded !== null, '/readyz says degraded while Redis is away');
    assert.ok(ready !== null, '/readyz says ready once Redis is back');
    assert.equal(acknowledged(during).length, during.length, `every write is recorded without Redis: ${summary(during)}`);
    assert.equal(fallbacksLogged() - loggedBefore, 1, 'the fallback is logged once');
    await assertSurvived(outcomes);
  }));
});
