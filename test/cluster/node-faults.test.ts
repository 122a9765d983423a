// One of three API nodes fails mid-load while the others keep writing: killed (SIGKILL), stopped
// (SIGSTOP) while it holds the append lock (issue 16, finding 3), or partitioned from PostgreSQL
// and Redis (its proxies cut). The other nodes' clients see only 201s, or 503s with Retry-After
// for at most the bounds the service sets; the failed node's clients see no answer or a 503,
// never a 500; nothing acknowledged is lost; and each chain verifies afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { DEFAULT_POSTGRES_TIMEOUTS, appendLockKey } from '../../src/store/postgres/store.ts';
import { Cluster, type ClusterNode } from '../support/cluster.ts';
import {
  acknowledged, assertAcknowledgedDurable, assertOnlyUnavailable, firstAcknowledgedAfter, longestGap, seconds, summary,
  WriteLoad, type LoadAgent, type Outcome,
} from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { repeated } from '../support/long.ts';

/** How often each fault is injected: once in CI, more in the long variant (LEDGER_TEST_LONG=1). */
const ROUNDS = 10;

const skip = skipUnlessAble('postgres-server', 'redis-server');

/** Which node's session holds the append lock now (by application_name), or null. */
async function appendLockHolder(cluster: Cluster): Promise<string | null> {
  const rows = await cluster.store.pool.query<{ application_name: string }>(
    `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
       AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtext($1)::bigint`, [appendLockKey('ledger')]);
  return rows.rows[0]?.application_name ?? null;
}

const byNode = (outcomes: Outcome[], nodes: ClusterNode[]) => outcomes.filter((o) => nodes.some((n) => n.target.name === o.node));

describe('a node fails mid-load while the others keep writing', { skip }, () => {
  let cluster: Cluster;
  let agents: LoadAgent[];
  let victim: ClusterNode;
  let survivors: ClusterNode[];

  before(async () => {
    cluster = await Cluster.start({ nodes: 3 });
    agents = await Promise.all([1, 2, 3].map(() => cluster.agent('faults')));
    [victim, ...survivors] = cluster.nodes as [ClusterNode, ...ClusterNode[]];
  });
  after(async () => {
    await cluster?.stop();
  });

  /** Each agent's writers: one to the victim, two to the survivors in turn. */
  function load(): WriteLoad {
    const toSurvivors = cluster.roundRobin(survivors);
    return new WriteLoad(agents.flatMap((agent) => [
      { agent, target: () => victim.target },
      { agent, target: toSurvivors },
      { agent, target: toSurvivors },
    ]), { timeoutMs: 30_000 }).start();
  }

  /** Every 201 is in a chain that verifies, no node crashed, and the global log (whichever node holds it now) takes every record. */
  async function assertNothingLost(outcomes: Outcome[]): Promise<void> {
    const records = await assertAcknowledgedDurable(cluster.store, agents, outcomes);
    assert.ok(records >= acknowledged(outcomes).length);
    assert.doesNotMatch(cluster.output(), /Unhandled|uncaught|FATAL ERROR/i, 'no node crashed');
    const total = Number((await cluster.store.pool.query('SELECT count(*) AS n FROM records')).rows[0].n);
    const integrated = async () => Number((await cluster.store.pool.query('SELECT COALESCE(MAX(tree_size), 0) AS n FROM log_checkpoints')).rows[0].n);
    for (const deadline = Date.now() + 30_000; await integrated() < total;) {
      if (Date.now() > deadline) assert.fail(`the global log holds ${await integrated()} of ${total} records:\n${cluster.output().slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  test('killed (SIGKILL): the others do not pause; the node restarts and writes again', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(30);
    const killedAt = Date.now();
    await victim.node.kill();
    await writes.acknowledgedAtLeast(30);
    const windowEnd = Date.now();
    await victim.node.start();
    const restartedAt = Date.now();
    for (const deadline = restartedAt + 20_000; Date.now() < deadline;) {
      if (firstAcknowledgedAfter(byNode(writes.outcomes, [victim]), restartedAt) !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const outcomes = await writes.stop();

    const gap = longestGap(byNode(outcomes, survivors), killedAt, windowEnd);
    t.diagnostic(`kill -9 of a node: longest pause of the other nodes' writes ${seconds(gap)}; ${summary(outcomes)}`);
    assertOnlyUnavailable(byNode(outcomes, survivors));
    assert.ok(byNode(outcomes, survivors).every((o) => o.status === 201), 'the other nodes acknowledge every write');
    assert.ok(gap < 3_000, `the other nodes kept writing (longest pause ${seconds(gap)})`);
    assertOnlyUnavailable(byNode(outcomes, [victim]), { noAnswer: true });
    assert.ok(firstAcknowledgedAfter(byNode(outcomes, [victim]), restartedAt) !== null, 'the restarted node writes again');
    await assertNothingLost(outcomes);
  }));

  test('stopped (SIGSTOP) holding the append lock: the others wait no longer than the bounds, answering 503 meanwhile', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(30);
    // Stop the victim at a moment it holds the append lock (checked again once it is stopped).
    let stoppedAt = 0;
    for (let attempt = 0; attempt < 500 && stoppedAt === 0; attempt++) {
      if (await appendLockHolder(cluster) !== victim.target.name) continue;
      victim.node.pause();
      if (await appendLockHolder(cluster) === victim.target.name) stoppedAt = Date.now();
      else victim.node.resume();
    }
    assert.ok(stoppedAt > 0, 'caught the node holding the append lock');
    const resumedOthers = await (async () => {
      const deadline = stoppedAt + 30_000;
      while (Date.now() < deadline) {
        const at = firstAcknowledgedAfter(byNode(writes.outcomes, survivors), stoppedAt);
        if (at !== null) return at;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return null;
    })();
    await writes.acknowledgedAtLeast(20);
    victim.node.resume();
    const continuedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const outcomes = await writes.stop();

    const { idleInTransactionMs, appendLockMs } = DEFAULT_POSTGRES_TIMEOUTS;
    assert.ok(resumedOthers !== null, `the other nodes write again: ${summary(outcomes)}`);
    const frozen = resumedOthers - stoppedAt;
    const survivorOutcomes = byNode(outcomes, survivors);
    const slowest = Math.max(...survivorOutcomes.map((o) => o.answeredAt - o.sentAt));
    t.diagnostic(`kill -STOP of the append lock's holder: the other nodes wrote again after ${seconds(frozen)} ` +
      `(idle_in_transaction_session_timeout ${seconds(idleInTransactionMs)}); slowest answer ${seconds(slowest)}; ${summary(survivorOutcomes)}`);
    // PostgreSQL ends the stalled transaction after the idle-in-transaction timeout, which frees the lock.
    assert.ok(frozen < idleInTransactionMs + appendLockMs, `writes on the other nodes resumed within ${seconds(frozen)}`);
    // Meanwhile every request on the other nodes is answered within the lock timeout (twice: one
    // batch may wait behind another), as a 503 with Retry-After.
    assertOnlyUnavailable(survivorOutcomes);
    assert.ok(slowest < 2 * appendLockMs + 3_000, `every request on the other nodes was answered within ${seconds(slowest)}`);
    // The stopped node's transaction was ended by PostgreSQL: once continued, it answers 503 and then writes again.
    assertOnlyUnavailable(byNode(outcomes, [victim]));
    assert.ok(firstAcknowledgedAfter(byNode(outcomes, [victim]), continuedAt) !== null, `the continued node writes again: ${summary(byNode(outcomes, [victim]))}`);
    await assertNothingLost(outcomes);
  }));

  test('partitioned from PostgreSQL and Redis: its clients get 503 at once, the others carry on, and it recovers when the network heals', repeated(ROUNDS, async (t: TestContext) => {
    const writes = load();
    await writes.acknowledgedAtLeast(30);
    const cutAt = Date.now();
    cluster.partition(victim);
    await writes.acknowledgedAtLeast(30);
    // The window lasts until the cut-off node has answered a request sent in it: on a quiet machine
    // the others' 30 writes take less time than that answer (seen as "its clients saw nothing").
    for (const until = Date.now() + 10_000; Date.now() < until && !byNode(writes.outcomes, [victim]).some((o) => o.sentAt >= cutAt);) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ready = await fetch(`${victim.node.url}/readyz`);
    const readyMs = Date.now() - cutAt;
    const windowEnd = Date.now();
    cluster.heal(victim);
    const healedAt = Date.now();
    let recovered: number | null = null;
    while (recovered === null && Date.now() - healedAt < 20_000) {
      recovered = firstAcknowledgedAfter(byNode(writes.outcomes, [victim]), healedAt);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const outcomes = await writes.stop();

    const cutOff = byNode(outcomes, [victim]).filter((o) => o.sentAt >= cutAt && o.answeredAt <= healedAt);
    const gap = longestGap(byNode(outcomes, survivors), cutAt, windowEnd);
    t.diagnostic(`partition of a node: its clients saw ${summary(cutOff)}; the others' longest pause ${seconds(gap)}; ` +
      `recovered ${recovered === null ? 'never' : seconds(recovered - healedAt)} after the network healed`);
    assert.equal(ready.status, 503, '/readyz says the partitioned node is not ready');
    assert.ok(readyMs < 10_000);
    assert.ok(cutOff.length > 0 && cutOff.every((o) => o.status === 503), `the cut-off node answered 503: ${summary(cutOff)}`);
    assertOnlyUnavailable(outcomes);
    assert.ok(byNode(outcomes, survivors).every((o) => o.status === 201));
    assert.ok(gap < 3_000, `the other nodes kept writing (longest pause ${seconds(gap)})`);
    assert.ok(recovered !== null, 'the node writes again once the network heals');
    await assertNothingLost(outcomes);
  }));
});
