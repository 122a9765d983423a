// Three API nodes (the real service, one process each) on one PostgreSQL and one Redis, as a
// scaled-out deployment runs: concurrent writers on one shared agent and on agents of their own,
// spread over every node; one Idempotency-Key sent to every node at once; one rate limit shared by
// the nodes. Afterwards every chain is gapless, holds every acknowledged record, and passes
// `ledger verify`, as does the global log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster } from '../support/cluster.ts';
import {
  acknowledged, assertAcknowledgedDurable, ledgerVerify, postDecision, summary, uniqueKey, WriteLoad, type LoadAgent, type Outcome, type Target,
} from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { longOrShort } from '../support/long.ts';
import { storedChain } from '../api/record-helpers.ts';

const skip = skipUnlessAble('postgres-server', 'redis-server');

/** Writes per writer (12 writers), and keys sent to every node at once: more in the long variant (LEDGER_TEST_LONG=1). */
const WRITES_PER_WRITER = longOrShort(400, 20);
const SHARED_KEYS = longOrShort(300, 15);
/** A write budget the rate-limit test reaches and the others do not (one API key makes at most 6 x WRITES_PER_WRITER writes). */
const WRITE_BUDGET = 6 * WRITES_PER_WRITER + 30;

/** Polls `check` every 100 ms until it holds, for at most `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('three API nodes on one PostgreSQL and one Redis', { skip }, () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start({ nodes: 3, env: { LEDGER_WRITE_LIMIT_PER_MIN: String(WRITE_BUDGET) } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('concurrent writers on a shared agent and on separate agents: every 201 is in a gapless chain that `ledger verify` passes', async () => {
    const shared = await cluster.agent('shared');
    const own = await Promise.all(cluster.nodes.map(() => cluster.agent('own')));
    const writers = [
      // Six writers of one agent, each sent to every node in turn.
      ...Array.from({ length: 6 }, (_, i) => {
        let n = i;
        return { agent: shared, target: () => cluster.nodes[n++ % 3]!.target };
      }),
      // Two writers per node for an agent of its own.
      ...own.flatMap((agent, i) => [0, 1].map(() => ({ agent, target: () => cluster.nodes[i]!.target }))),
    ];
    const outcomes = await new WriteLoad(writers, { maxPerWriter: WRITES_PER_WRITER }).start().finished();
    assert.equal(acknowledged(outcomes).length, outcomes.length, summary(outcomes));

    const agents = [shared, ...own];
    const total = await assertAcknowledgedDurable(cluster.store, agents, outcomes);
    assert.equal(total, outcomes.length, 'one record per acknowledged write, none other');
    for (const agent of agents) {
      // Ids follow commit order on every node: in each chain they rise with the seq.
      const ids = (await storedChain(cluster.store, agent.agentId)).map((r) => r.id);
      assert.deepEqual(ids, [...ids].sort(), `${agent.handle}: ids rise with chain_seq`);
    }
    for (const [i, agent] of agents.entries()) {
      const node = cluster.nodes[i % 3]!.node;
      const verified = await ledgerVerify(`${node.url}/v1/export?agent=${agent.handle}`);
      assert.equal(verified.code, 0, verified.out);
    }

    // The global log, integrated by whichever node holds it, takes every record exactly once.
    const base = `${cluster.nodes[1]!.node.url}/v1`;
    await until('the global log to integrate every record', async () => {
      const res = await fetch(`${base}/log/checkpoint`);
      return res.status === 200 && Number((await res.text()).split('\n')[1]) === total;
    });
    const log = await ledgerVerify(`${base}/log`);
    assert.equal(log.code, 0, log.out);
  });

  // The interface lets a node answer 409 idempotency_request_in_flight while the key's first
  // request is still being processed ("retry shortly"), as the client library does; the retry
  // must then answer the one record.
  let inFlightAnswers = 0;
  const postUntilAnswered = async (target: Target, agent: LoadAgent, key: string, body: object): Promise<Outcome> => {
    for (let tries = 1; ; tries++) {
      const answer = await postDecision(target, agent, key, 20_000, body);
      if (answer.error !== 'idempotency_request_in_flight' || tries === 5) return answer;
      inFlightAnswers++;
      await new Promise((resolve) => setTimeout(resolve, 50 * tries));
    }
  };

  test('exactly once across nodes: one Idempotency-Key sent to every node at once makes one record, and each node answers it', async (t) => {
    const agent = await cluster.agent('idem');
    for (let i = 0; i < SHARED_KEYS; i++) {
      const key = uniqueKey('same');
      const body = { symbol: 'MSFT', action: 'SELL', quantity: String(i + 1) };
      const answers = await Promise.all(cluster.nodes.map((n) => postUntilAnswered(n.target, agent, key, body)));
      for (const a of answers) assert.equal(a.status, 201, `${a.node}: ${a.status} ${a.error}`);
      assert.equal(new Set(answers.map((a) => a.id)).size, 1, 'every node answers with the one record');
    }
    // The same key with different bodies at once: one is recorded, the others are refused as a reuse.
    const key = uniqueKey('reused');
    const answers = await Promise.all(cluster.nodes.map((n, i) => postDecision(n.target, agent, key, 20_000, { symbol: 'MSFT', action: 'BUY', quantity: String(100 + i) })));
    assert.equal(answers.filter((a) => a.status === 201).length, 1, summary(answers));
    for (const a of answers.filter((x) => x.status !== 201)) assert.deepEqual([a.status, a.error], [409, 'idempotency_key_reused']);

    const chain = await storedChain(cluster.store, agent.agentId);
    assert.equal(chain.length, SHARED_KEYS + 1, 'one record per key');
    t.diagnostic(`${SHARED_KEYS} keys sent to 3 nodes at once: ${inFlightAnswers} answers of 409 idempotency_request_in_flight, each retried to a 201`);
  });

  test(`one rate limit across nodes: a budget of ${WRITE_BUDGET} writes a minute per key holds in total, whichever nodes the writes reach`, async () => {
    const agent = await cluster.agent('limited');
    const next = cluster.roundRobin();
    // Three clients, each to every node in turn: 30 writes past the budget, well within the minute.
    const outcomes = (await Promise.all([0, 1, 2].map(async () => {
      const mine = [];
      for (let i = 0; i < (WRITE_BUDGET + 30) / 3; i++) mine.push(await postDecision(next(), agent));
      return mine;
    }))).flat();
    assert.equal(acknowledged(outcomes).length, WRITE_BUDGET, summary(outcomes));
    for (const o of outcomes.filter((x) => x.status !== 201)) {
      assert.deepEqual([o.status, o.error], [429, 'rate_limit_exceeded']);
      assert.match(o.retryAfter ?? '', /^[0-9]+$/);
    }
    assert.equal((await storedChain(cluster.store, agent.agentId)).length, WRITE_BUDGET);
  });
});
