// The broker sync wired into the service, on SQLite and PostgreSQL, against the Alpaca simulator:
// every fill recorded exactly once (run twice; interrupted and rerun; killed between the append and
// the index; two syncs at once), links (link_token only to the same agent's earlier decision,
// inferred labelled), the chain verifies, no request changes broker state, and no credential
// appears in any response, log line, error, export or stored row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BrokerSync } from '../../src/brokers/sync.ts';
import type { BrokerStore } from '../../src/brokers/port.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { StoredRecord } from '../../src/domain/types.ts';
import { forEachStore } from '../support/stores.ts';
import { asChainRecord } from '../api/record-helpers.ts';
import { verifyChain } from '../../src/core/verify.ts';
import { runVerify } from '../../src/verify/run.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dayOfFills, startAlpacaSim, type AlpacaScenario, type AlpacaSim } from '../sim/alpaca.ts';
import { brokerTestApp, connectAlpaca as connect, executions, type BrokerTestApp } from './wiring-support.ts';

const noSleep = { sleep: async () => {} };

const fillIdOf = (r: StoredRecord) => (JSON.parse(r.content) as { broker_fill_id: string }).broker_fill_id;

function assertOnce(records: StoredRecord[], scenario: AlpacaScenario): void {
  const ids = records.map(fillIdOf);
  assert.equal(new Set(ids).size, ids.length, 'no fill recorded twice');
  assert.deepEqual([...ids].sort(), scenario.fills.map((f) => f.id).sort(), 'every fill recorded');
}

await forEachStore('broker sync wired into the service', (kind) => {
  let sim: AlpacaSim;
  let store: LedgerStore;
  let t: BrokerTestApp;
  const responses: string[] = [];

  before(async () => {
    sim = await startAlpacaSim({ scenario: dayOfFills({ quirks: { prefixPaging: true } }) });
    store = await kind.open();
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  describe('a day of fills', () => {
    let owner: Awaited<ReturnType<BrokerTestApp['agent']>>;
    let other: Awaited<ReturnType<BrokerTestApp['agent']>>;
    let id: string;
    const decisions: Record<string, { id: string; link_token: string }> = {};

    before(async () => {
      owner = await t.agent();
      other = await t.agent();
      t.clock.set('2026-03-13T13:00:00.000Z');
      decisions.aapl = await t.decide(owner.secret, { symbol: 'AAPL', action: 'BUY' });
      decisions.msft = await t.decide(owner.secret, { symbol: 'MSFT', action: 'BUY' });
      decisions.spy = await t.decide(owner.secret, { symbol: 'SPY', action: 'INCREASE' });
      decisions.othersTsla = await t.decide(other.secret, { symbol: 'TSLA', action: 'BUY' });
      t.clock.set('2026-03-13T15:00:00.000Z'); // after every fill of the day
      decisions.lateNvda = await t.decide(owner.secret, { symbol: 'NVDA', action: 'BUY' });
      const order = (symbol: string, pick: (o: AlpacaScenario['orders'][number]) => boolean = () => true) =>
        sim.scenario.orders.find((o) => o.symbol === symbol && o.parent === null && o.replaces === null && pick(o))!;
      order('AAPL').client_order_id = decisions.aapl.link_token;
      order('MSFT').client_order_id = `${decisions.msft.link_token}-a1`;
      order('TSLA').client_order_id = decisions.othersTsla.link_token;
      order('NVDA').client_order_id = decisions.lateNvda.link_token;
      id = await connect(t, owner.secret, sim);
    });

    test('a sync records every fill once; a second sync records nothing more', async () => {
      const first = await t.brokers.syncNow(id);
      assert.equal(first.kind, 'synced', JSON.stringify(first));
      assertOnce(await executions(store, owner.agentId), sim.scenario);
      const second = await t.brokers.syncNow(id);
      assert.equal(second.kind, 'synced');
      assert.equal(second.kind === 'synced' && second.summary.counts.executions_recorded, 0);
      assertOnce(await executions(store, owner.agentId), sim.scenario);
      assert.equal((await store.countRecords(owner.agentId)).byType.execution, sim.scenario.fills.length);
    });

    test('links: link_token only to the same agent\'s earlier decision, through replacements; inferred labelled', async () => {
      const records = await executions(store, owner.agentId);
      const bySymbol = (s: string) => records.filter((r) => r.symbol === s).map((r) => JSON.parse(r.content).link);
      for (const l of bySymbol('AAPL')) assert.deepEqual(l, { method: 'link_token', decision_id: decisions.aapl!.id });
      for (const l of bySymbol('MSFT')) assert.deepEqual(l, { method: 'link_token', decision_id: decisions.msft!.id }, 'the replacement carries the original token');
      for (const l of bySymbol('TSLA')) assert.notEqual(l?.decision_id, decisions.othersTsla!.id, "never another agent's decision");
      for (const l of bySymbol('NVDA')) assert.equal(l, null, 'a decision recorded after the fill is never linked');
      const spy = bySymbol('SPY').filter((l) => l !== null);
      assert.ok(spy.length >= 1);
      for (const l of spy) assert.deepEqual(l, { method: 'inferred', decision_id: decisions.spy!.id });
      const c = (await t.brokers.find({ id: owner.agentId } as never, id));
      assert.ok(c.ok);
      assert.ok(c.value.last_sync === null || c.value.last_sync.counts.linked_inferred === 0, 'the second sync linked nothing new');
    });

    test('the chain verifies; executions show on /v1/ledger, /proof, /chain and /export with provenance BROKER_SYNCED', async () => {
      const chain0 = await store.listChain(owner.agentId, 0, 100_000);
      assert.deepEqual(chain0.map((r) => r.chainSeq), chain0.map((_, i) => i + 1));
      const verified = verifyChain({ agent: owner.handle, records: chain0.map(asChainRecord) });
      assert.equal(verified.ok, true, JSON.stringify(verified.failures));
      assert.equal(chain0.filter((r) => r.type === 'execution').length, sim.scenario.fills.length);
      const ledger = await t.app.inject({ method: 'GET', url: `/v1/ledger?type=execution&agent=${owner.handle}&limit=5` });
      assert.equal(ledger.statusCode, 200, ledger.body);
      responses.push(ledger.body);
      const items = ledger.json().data ?? ledger.json().records;
      assert.ok(Array.isArray(items) && items.length === 5, ledger.body.slice(0, 300));
      for (const item of items) {
        assert.equal(item.entry.type, 'execution');
        assert.equal(item.provenance, 'BROKER_SYNCED');
        assert.equal(item.broker, 'alpaca');
      }
      const proof = await t.app.inject({ method: 'GET', url: `/v1/proof/${items[0].entry.id}` });
      assert.equal(proof.statusCode, 200, proof.body);
      responses.push(proof.body);
      assert.match(proof.body, /BROKER_SYNCED/);
      const chain = await t.app.inject({ method: 'GET', url: `/v1/agents/${owner.handle}/chain?limit=2000` });
      assert.equal(chain.statusCode, 200);
      responses.push(chain.body);
      const exp = await t.app.inject({ method: 'GET', url: `/v1/export?agent=${owner.handle}` });
      assert.equal(exp.statusCode, 200);
      responses.push(exp.body);
      assert.equal(exp.body.split('\n').filter((l) => l.includes('"execution"')).length >= sim.scenario.fills.length, true);
      // `ledger verify` on the export file: executions and their provenance labels pass.
      const dir = mkdtempSync(join(tmpdir(), 'brk-export-'));
      const file = join(dir, 'export.ndjson');
      writeFileSync(file, exp.body);
      const lines: string[] = [];
      const code = await runVerify(file, { workers: 0 }, (l) => lines.push(l));
      rmSync(dir, { recursive: true, force: true });
      assert.equal(code, 0, lines.join('\n'));
    });

    test('positions are snapshotted and reconciled; the connection shows them', async () => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/brokers/${id}`, headers: { authorization: `Bearer ${owner.secret}` } });
      assert.equal(res.statusCode, 200, res.body);
      responses.push(res.body);
      const c = res.json();
      assert.equal(c.status, 'active');
      assert.ok(c.positions !== null);
      assert.ok(Array.isArray(c.positions.reconciliation) && c.positions.reconciliation.length > 0);
      assert.ok(c.positions.reconciliation.every((p: { matches: boolean }) => p.matches), 'the simulator reports what the fills imply');
      assert.deepEqual(c.last_sync.caveats.filter((x: { code: string }) => x.code === 'position_mismatch'), []);
    });

    test('no request to the broker changed state', () => {
      assert.ok(sim.requests.length > 0);
      assert.deepEqual(sim.requests.filter((r) => r.stateChanging || r.method !== 'GET'), []);
    });
  });

  describe('interruptions', () => {
    test('an outage mid-sync shows on the connection, records no fill half-way; the rerun records each fill once', async () => {
      const outage = await startAlpacaSim({ scenario: dayOfFills({ faults: { outage: { from: 5, count: 50, status: 503 } } }) });
      const s2 = await kind.open();
      const t2 = await brokerTestApp(s2, { LEDGER_ALPACA_TRADING_URL: outage.url });
      try {
        const a = await t2.agent();
        const id = await connect(t2, a.secret, outage);
        const sync = new BrokerSync({ ...syncDeps(t2, s2, outage.url), chunkFills: 20 });
        const failed = await sync.sync(id);
        assert.equal(failed.kind, 'failed', JSON.stringify(failed));
        const shown = await t2.brokers.find({ id: a.agentId } as never, id);
        assert.ok(shown.ok && shown.value.status === 'error' && shown.value.last_error !== null && shown.value.syncing === false);
        const part = await executions(s2, a.agentId);
        assert.ok(part.length > 0 && part.length < outage.scenario.fills.length, `${part.length} of ${outage.scenario.fills.length} before the outage`);
        outage.scenario.faults = {};
        const done = await sync.sync(id);
        assert.equal(done.kind, 'synced', JSON.stringify(done));
        assertOnce(await executions(s2, a.agentId), outage.scenario);
        const again = await t2.brokers.find({ id: a.agentId } as never, id);
        assert.ok(again.ok && again.value.status === 'active' && again.value.last_error === null);
      } finally {
        await t2.close();
        await s2.close();
        await outage.close();
      }
    });

    test('killed after appending and before indexing (kill -9): the rerun records nothing twice', async () => {
      const a = await t.agent();
      const id = await connect(t, a.secret, sim);
      const brokers = store.brokers;
      // A store that "dies" right after the append: the fill index is never written.
      const dying = Object.create(brokers) as BrokerStore;
      dying.saveImportedFills = async () => {
        throw new Error('killed');
      };
      await assert.rejects(new BrokerSync({ ...syncDeps(t, store, sim.url), brokers: dying }).sync(id), /killed/);
      const recorded = (await executions(store, a.agentId)).length;
      assert.ok(recorded > 0, 'the first chunk was appended before the kill');
      const rerun = await new BrokerSync(syncDeps(t, store, sim.url)).sync(id);
      assert.equal(rerun.kind, 'synced', JSON.stringify(rerun));
      assertOnce(await executions(store, a.agentId), sim.scenario);
      assert.ok(rerun.kind === 'synced' && rerun.summary.counts.already_recorded >= recorded, 'the index is repaired from the records');
    });

    test('two syncs of one connection at once (two nodes, and even without the lock) record each fill once', async () => {
      const a = await t.agent();
      const id = await connect(t, a.secret, sim);
      const otherNode = openStore(storeUrl(store));
      await otherNode.migrate();
      try {
        const one = new BrokerSync(syncDeps(t, store, sim.url));
        const two = new BrokerSync({ ...syncDeps(t, otherNode, sim.url), brokers: otherNode.brokers });
        const outcomes = await Promise.all([one.sync(id), two.sync(id)]);
        assert.ok(outcomes.some((o) => o.kind === 'synced'), JSON.stringify(outcomes.map((o) => o.kind)));
        assertOnce(await executions(store, a.agentId), sim.scenario);
        // Without any lock: exactly-once rests on the Idempotency-Keys alone.
        const b = await t.agent();
        const id2 = await connect(t, b.secret, sim);
        const unlocked = (s: LedgerStore) => {
          const base = s.brokers;
          const open = Object.create(base) as BrokerStore;
          open.tryLockSync = async () => ({ release: async () => {} });
          return open;
        };
        const both = await Promise.all([
          new BrokerSync({ ...syncDeps(t, store, sim.url), brokers: unlocked(store), chunkFills: 10 }).sync(id2),
          new BrokerSync({ ...syncDeps(t, otherNode, sim.url), brokers: unlocked(otherNode), chunkFills: 10 }).sync(id2),
        ]);
        assert.deepEqual(both.map((o) => o.kind), ['synced', 'synced']);
        assertOnce(await executions(store, b.agentId), sim.scenario);
      } finally {
        await otherNode.close();
      }
    });
  });

  test('no credential in any response, log line, error, export or stored row', async () => {
    const k = sim.scenario.keys[0]!;
    const a = await t.agent();
    const bad = await t.app.inject({
      method: 'POST', url: '/v1/brokers/alpaca', headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key_id: k.keyId, api_secret: `${k.secretKey}-wrong`, environment: 'paper' }),
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().error.param, 'api_key_id');
    responses.push(bad.body);
    const list = await t.app.inject({ method: 'GET', url: '/v1/brokers', headers: { authorization: `Bearer ${a.secret}` } });
    responses.push(list.body);
    const openapi = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    responses.push(openapi.body);
    const rows = JSON.stringify(await store.brokers.listConnections());
    for (const secret of [k.secretKey]) {
      for (const [what, texts] of [['response', responses], ['log line', t.logs], ['stored row', [rows]]] as const) {
        for (const text of texts) assert.ok(!text.includes(secret), `a ${what} holds the Alpaca secret`);
      }
    }
    assert.ok(t.logs.length > 0, 'the logs were captured');
  });
});

function syncDeps(t: BrokerTestApp, store: LedgerStore, alpacaUrl: string) {
  const base = (t.brokers as unknown as { deps: ConstructorParameters<typeof BrokerSync>[0] }).deps;
  return { ...base, store, brokers: store.brokers, endpoints: { ...base.endpoints, alpacaUrl, http: noSleep } };
}

/** The URL a store was opened from, for a second "node" on the same database. */
function storeUrl(store: LedgerStore): string {
  const s = store as unknown as { path?: string; schema?: string; pool?: { options: { connectionString: string } } };
  if (s.path !== undefined) return `sqlite:${s.path}`;
  const u = new URL(s.pool!.options.connectionString);
  u.searchParams.set('schema', s.schema!);
  return u.toString();
}
