// Public reads from a PostgreSQL streaming replica (LEDGER_READ_DATABASE_URL), set up here with
// pg_basebackup -R from a primary of the test's own, against the real service (`ledger serve`).
// With replay paused (pg_wal_replay_pause), the replica is behind: public pages are stale, as
// documented, but a writer's proof link never answers 404, its chain_from_here link shows its
// record, and writes and authenticated reads go to the primary. A replica that stops answering
// costs nothing but its freshness: public reads go to the primary until it is back.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres/store.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import { postDecision, seconds, summary, type LoadAgent, type Outcome } from '../support/load.ts';
import { skipUnlessAble } from '../support/own-servers.ts';
import { longOrShort } from '../support/long.ts';
import { PgServer } from '../support/pg-server.ts';
import { freePort } from '../support/ports.ts';

const skip = skipUnlessAble('postgres-server');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Entry = { entry: { id: string } };
type Json = Record<string, unknown> & { data?: (Entry & { id?: string })[]; records?: Entry[]; head?: { seq: number } };

describe('public reads from a streaming replica', { skip }, () => {
  let primary: PgServer;
  let replica: PgServer;
  let store: PostgresStore;
  let node: LedgerNode;
  let dir: string;
  const target = () => ({ name: node.name, url: node.url });

  const get = async (path: string, secret?: string): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${node.url}${path}`, { headers: secret ? { authorization: `Bearer ${secret}` } : {} });
    return { status: res.status, json: await res.json() as Json };
  };
  const agent = async (prefix: string): Promise<LoadAgent> => {
    const handle = `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e4)}`;
    const created = await new Operators(store, systemClock).createAgent({ handle });
    assert.ok(created.ok);
    return { agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret };
  };
  const pause = () => replica.query('SELECT pg_wal_replay_pause()');
  const resume = () => replica.query('SELECT pg_wal_replay_resume()');
  /** Waits until the replica has replayed everything the primary has written so far. */
  const caughtUp = async () => {
    const [current] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(20)) {
      const [row] = await replica.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [current!.lsn]);
      if (row?.done) return;
    }
    assert.fail('the replica did not catch up');
  };
  const ledgerIds = async (handle: string) => (await get(`/v1/ledger?agent=${handle}&limit=200`)).json.data!.map((r) => r.entry.id);

  before(async () => {
    primary = await PgServer.start('primary');
    store = new PostgresStore({ ...parsePostgresUrl(primary.url('postgres', { schema: 'ledger' })), poolSize: 2 });
    await store.migrate();
    replica = await PgServer.replicaOf(primary);
    dir = mkdtempSync(join(tmpdir(), 'ledger-replica-'));
    node = new LedgerNode('replica-reader', await freePort(), {
      LEDGER_DATABASE_URL: primary.url('postgres', { schema: 'ledger' }),
      LEDGER_READ_DATABASE_URL: replica.url('postgres', { schema: 'ledger', connect_timeout: '2', query_timeout: '3000' }),
      LEDGER_LOG_LEVEL: 'info',
    }, dir);
    await node.start();
  });
  after(async () => {
    await node?.terminate();
    await store?.close();
    replica?.destroy();
    primary?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('behind by a paused replay: public pages are stale, but the writer\'s proof and chain links show its record, and its own reads are fresh', async () => {
    const a = await agent('replica');
    const first = await postDecision(target(), a);
    assert.equal(first.status, 201);
    await caughtUp();
    await pause();
    try {
      const second = await postDecision(target(), a);
      assert.equal(second.status, 201);
      const b = await agent('newcomer');

      // Stale: the replica has not replayed the second record (public reads come from it).
      assert.deepEqual(await ledgerIds(a.handle), [first.id]);
      const chain = await get(`/v1/agents/${a.handle}/chain`);
      assert.equal(chain.json.head!.seq, 1, 'a chain page from the start shows the replica\'s head');
      // Authenticated reads come from the primary.
      const own = await get('/v1/decisions', a.secret);
      assert.deepEqual(own.json.data!.map((r) => r.id), [second.id, first.id]);
      // Never a 404 for what a writer was told: the proof link, its chain_from_here link, a new agent.
      const proof = await fetch(second.proofUrl!);
      assert.equal(proof.status, 200);
      const bundle = await proof.json() as { record: Entry; agent: { head: { seq: number } }; links: { chain_from_here: string } };
      assert.equal(bundle.record.entry.id, second.id);
      assert.equal(bundle.agent.head.seq, 2, 'the bundle\'s head covers its record');
      const fromHere = await (await fetch(bundle.links.chain_from_here)).json() as Json;
      assert.deepEqual(fromHere.records!.map((r) => r.entry.id), [second.id]);
      assert.equal((await get(`/v1/agents/${b.handle}`)).status, 200, 'an agent created meanwhile is found');
      // A true 404 stays a 404, below and above the replica's newest record.
      assert.equal((await get('/v1/proof/dec_00000000000000000000000000')).status, 404);
      assert.equal((await get('/v1/proof/dec_7ZZZZZZZZZZZZZZZZZZZZZZZZZ')).status, 404);
    } finally {
      await resume();
    }
    await caughtUp();
  });

  test('under write load with replay paused and resumed: every proof link answers 200 at once; the lag is measured', async (t: TestContext) => {
    const writers = await Promise.all([1, 2, 3].map(() => agent('loaded')));
    let running = true;
    const checks: { write: Outcome; proof: number }[] = [];
    const lags: number[] = [];
    const write = async (a: LoadAgent) => {
      while (running) {
        const w = await postDecision(target(), a);
        const proof = w.status === 201 ? (await fetch(w.proofUrl!)).status : 0;
        checks.push({ write: w, proof });
      }
    };
    const toggle = async () => {
      for (let i = 0; i < longOrShort(100, 6); i++) {
        await pause();
        await sleep(300);
        await resume();
        // While replay runs, how far behind the primary is the replica (the age of its newest replayed commit)?
        for (let j = 0; j < 6; j++) {
          const [row] = await replica.query<{ ms: number | null }>('SELECT (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS ms');
          if (row?.ms !== null && row?.ms !== undefined) lags.push(row.ms);
          await sleep(50);
        }
      }
      running = false;
    };
    await Promise.all([...writers.map(write), toggle()]);
    const writes = checks.map((c) => c.write);
    const notFound = checks.filter((c) => c.proof !== 200);
    lags.sort((x, y) => x - y);
    t.diagnostic(`${checks.length} writes (${summary(writes)}), each followed at once by its proof link: ${checks.length - notFound.length} answered 200; ` +
      `replica lag while replaying: median ${seconds(lags[Math.floor(lags.length / 2)] ?? 0)}, max ${seconds(lags[lags.length - 1] ?? 0)}`);
    assert.ok(writes.every((w) => w.status === 201), summary(writes));
    assert.deepEqual(notFound.map((c) => `${c.write.id}: ${c.proof}`), [], 'every proof link answers 200');
    await caughtUp();
  });

  test('a replica that stops answering: public reads go to the primary, then back to the replica once it answers', async (t: TestContext) => {
    const a = await agent('fallback');
    const written = await postDecision(target(), a);
    assert.equal(written.status, 201);
    await replica.stop('fast');
    const stoppedAt = Date.now();
    const during = await get(`/v1/ledger?agent=${a.handle}`);
    const duringMs = Date.now() - stoppedAt;
    assert.equal(during.status, 200);
    assert.deepEqual(during.json.data!.map((r) => r.entry.id), [written.id]);
    assert.equal((await fetch(written.proofUrl!)).status, 200);
    assert.match(node.output, /the read replica is not answering/);

    await replica.start();
    const startedAt = Date.now();
    let back: number | null = null;
    while (back === null && Date.now() - startedAt < 30_000) {
      await get(`/v1/agents/${a.handle}`);
      if (/the read replica answers again/.test(node.output)) back = Date.now();
      else await sleep(200);
    }
    t.diagnostic(`replica stopped: the first public read answered from the primary in ${seconds(duringMs)}; ` +
      `reads used the replica again ${back === null ? 'never' : seconds(back - startedAt)} after it was back`);
    assert.ok(back !== null, 'public reads use the replica again');
    assert.equal(node.output.match(/the read replica is not answering/g)?.length, 1, 'said once');
  });
});
