// /v1/ledger and the global log under concurrent writers on three API nodes sharing one
// PostgreSQL schema (docs/log.md, "/v1/ledger ordering and the per-schema append lock"). Writers
// for many agents post to every node in turn while three readers run:
// - a walker pages /v1/ledger from the newest record down with cursors, again and again: each walk
//   sees every record acknowledged before it started, and none twice;
// - a follower polls the newest page and reads down only to the newest record it already had, as
//   a client keeping up with the ledger does: it ends with every record, none twice;
// - the integrator (whichever node holds it) puts every record in the global log exactly once,
//   each agent's records in chain order.
// The follower and the integrator rely on record ids following commit order, which the append
// lock gives. LEDGER_TEST_NO_APPEND_LOCK=1 starts the nodes without it (test/support/no-append-lock.mjs),
// and then this test fails: that is how it shows what the lock protects. The walker cannot fail
// that way: a descending walk reads a fixed set (records that existed at its start) by a unique key
// below its cursor, whatever order they committed in; records committed later do not concern it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster, noAppendLockEnv } from '../support/cluster.ts';
import { acknowledged, summary, WriteLoad, type LoadAgent, type Target } from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { longOrShort } from '../support/long.ts';

const skip = skipUnlessAble('postgres-server');
const WITHOUT_LOCK = process.env.LEDGER_TEST_NO_APPEND_LOCK === '1';

const AGENTS = 12;
/** Writes at least, over two writers per agent: more in the long variant (LEDGER_TEST_LONG=1). */
const WRITES = AGENTS * 2 * longOrShort(100, 40);
/**
 * The writers go on until the readers have done this much while they wrote, so that the readers'
 * checks are made under writes however much the reads yield to the writes on a busy machine.
 */
const WALKS = 3;
const POLLS = 10;
const READERS_DEADLINE_MS = 120_000;
const PAGE = 200;

type LedgerPage = { data: { entry: { id: string } }[]; next_cursor: string | null };

/** Refusals a walker takes, waiting Retry-After as an honest client does, before it gives up. */
const REFUSALS_TAKEN = 10;

/**
 * A page of /v1/ledger. The reads yield to the writes (docs/operations.md, "Bounds on public
 * reads"), so under these writers a read may be refused (429 or 503, with Retry-After): the
 * walker waits as told and asks again; what it is testing is the order of what it is given.
 */
async function ledgerPage(target: Target, cursor: string | null): Promise<LedgerPage> {
  const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
  for (let refused = 0; ; refused++) {
    const res = await fetch(`${target.url}/v1/ledger?${query}`, { signal: AbortSignal.timeout(20_000) });
    const retryAfter = Number(res.headers.get('retry-after'));
    if ((res.status === 429 || res.status === 503) && retryAfter > 0 && refused < REFUSALS_TAKEN) {
      await res.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1_000));
      continue;
    }
    assert.equal(res.status, 200, `${target.name}: GET /v1/ledger answered ${res.status}${refused > 0 ? ` after ${refused} refusals` : ''}`);
    return (await res.json()) as LedgerPage;
  }
}

const sortKey = (id: string) => id.slice(id.indexOf('_') + 1);

/** A whole walk from the newest record down, each page from the next node: every id, in order read. */
async function walk(next: () => Target): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await ledgerPage(next(), cursor);
    ids.push(...page.data.map((r) => r.entry.id));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return ids;
}

/** A client keeping up: reads from the newest record down to the newest one it already had. */
class Follower {
  readonly seen = new Set<string>();
  private newest = '';

  async poll(next: () => Target): Promise<void> {
    const fresh: string[] = [];
    let cursor: string | null = null;
    read: do {
      const page = await ledgerPage(next(), cursor);
      for (const { entry: { id } } of page.data) {
        if (sortKey(id) <= this.newest) break read;
        fresh.push(id);
      }
      cursor = page.next_cursor;
    } while (cursor !== null);
    for (const id of fresh) {
      assert.ok(!this.seen.has(id), `the follower read ${id} twice`);
      this.seen.add(id);
    }
    if (fresh.length > 0) this.newest = sortKey(fresh[0]!);
  }
}

type Leaf = { log_index: string; record_id: string; agent_id: string; chain_seq: string };

describe(`/v1/ledger and the global log under writers on three nodes${WITHOUT_LOCK ? ' (WITHOUT the append lock: expected to fail)' : ''}`, { skip }, () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start({ nodes: 3, redis: false, env: WITHOUT_LOCK ? noAppendLockEnv() : {} });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('walks miss and repeat nothing, a follower ends with every record once, the log takes every record once in chain order', async () => {
    const agents: LoadAgent[] = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await cluster.agent('order'));
    const nextWriteNode = cluster.roundRobin();
    const writers = agents.flatMap((agent) => [0, 1].map(() => ({ agent, target: nextWriteNode })));
    const load = new WriteLoad(writers).start();
    let writing = true;

    const nextReadNode = cluster.roundRobin();
    const follower = new Follower();
    let walks = 0;
    let polls = 0;
    const walker = (async () => {
      while (writing) {
        const startedAt = Date.now();
        const existed = acknowledged(load.outcomes).filter((o) => o.answeredAt < startedAt).map((o) => o.id!);
        const ids = await walk(nextReadNode);
        const read = new Set(ids);
        assert.equal(read.size, ids.length, `walk ${walks + 1} read ${ids.length - read.size} record(s) twice`);
        const missed = existed.filter((id) => !read.has(id));
        assert.deepEqual(missed, [], `walk ${walks + 1} missed records acknowledged before it started`);
        walks++;
      }
    })();
    const following = (async () => {
      while (writing) {
        await follower.poll(nextReadNode);
        polls++;
      }
    })();
    // A reader stops while the writers write only by failing; awaited below, its failure must not
    // crash the process as an unheard rejection first.
    let readerStopped = false;
    for (const reader of [walker, following]) reader.finally(() => (readerStopped = true)).catch(() => undefined);
    const deadline = Date.now() + READERS_DEADLINE_MS;
    while (!readerStopped && (acknowledged(load.outcomes).length < WRITES || walks < WALKS || polls < POLLS) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const outcomes = await load.stop();
    writing = false;
    await Promise.all([walker, following]);
    await follower.poll(nextReadNode);
    assert.equal(acknowledged(outcomes).length, outcomes.length, summary(outcomes));
    assert.ok(walks >= WALKS && polls >= POLLS, `the readers ran while the writers did (${walks} walks, ${polls} polls in ${READERS_DEADLINE_MS / 1000} s)`);

    const { rows: records } = await cluster.store.pool.query('SELECT id FROM records ORDER BY id');
    const all = records.map((r: { id: string }) => r.id);
    assert.equal(all.length, outcomes.length, 'one record per acknowledged write');

    const leaves = await logLeaves(cluster, all.length);
    const inLog = new Set(leaves.map((l) => l.record_id));
    assert.deepEqual(all.filter((id) => !inLog.has(id)), [], `the log skipped ${all.length - inLog.size} record(s) that committed after it had passed their ids`);
    assert.deepEqual(leaves.map((l) => Number(l.log_index)), all.map((_, i) => i), 'log indexes 0..n-1');
    assert.deepEqual(leaves.map((l) => l.record_id).sort(), all, 'every record in the log exactly once');
    const lastSeq = new Map<string, number>();
    for (const leaf of leaves) {
      const seq = Number(leaf.chain_seq);
      assert.equal(seq, (lastSeq.get(leaf.agent_id) ?? 0) + 1, `${leaf.record_id}: its agent's records enter the log in chain order`);
      lastSeq.set(leaf.agent_id, seq);
    }

    const unseen = all.filter((id) => !follower.seen.has(id));
    assert.deepEqual(unseen, [], `the follower missed ${unseen.length} record(s) that committed after it had read past their ids`);
    assert.equal(follower.seen.size, all.length);
  });
});

/** The log's leaves once it holds `count` (or, after 20 s, whatever it holds: the caller's checks then say what is missing). */
async function logLeaves(cluster: Cluster, count: number): Promise<Leaf[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await cluster.store.pool.query(`SELECT l.log_index, l.record_id, r.agent_id, r.chain_seq
      FROM log_leaves l JOIN records r ON r.id = l.record_id ORDER BY l.log_index`);
    if (rows.length >= count || Date.now() > deadline) return rows as Leaf[];
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
