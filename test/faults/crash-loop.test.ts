// A crash loop: the real service (`ledger serve`) is killed with SIGKILL under write load, started
// again and killed again, 20 times on each store (200 times, with longer loads, under
// LEDGER_TEST_LONG=1; LEDGER_CRASH_CYCLES sets the count). Afterwards every write a client got a
// 201 for is in its chain with the id and seq it was told, every chain is gapless and passes
// `ledger verify`, and the global log holds every record and verifies too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { systemClock } from '../../src/ledger/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { openStore } from '../../src/store/open.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import { acknowledged, assertAcknowledgedDurable, ledgerVerify, summary, WriteLoad, type LoadAgent, type Outcome } from '../support/load.ts';
import { freePort } from '../support/ports.ts';
import { forEachStore } from '../support/stores.ts';
import { LONG, longOrShort } from '../support/long.ts';

const CYCLES = Number(process.env.LEDGER_CRASH_CYCLES ?? longOrShort(200, 20));
/** How long the load runs past its first acknowledgements before the kill, at most. */
const MAX_EXTRA_LOAD_MS = longOrShort(1_000, 150);

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

await forEachStore(`kill -9 under load, ${CYCLES} times${LONG ? ' (long variant)' : ''}`, (kind) => {
  const dirs: string[] = [];
  after(async () => {
    await kind.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('every acknowledged write survives, every chain and the global log verify', async (t: TestContext) => {
    const databaseUrl = await kind.freshUrl();
    const setup = openStore(databaseUrl);
    await setup.migrate();
    const operators = new Operators(setup, systemClock);
    const agents: LoadAgent[] = [];
    for (let i = 0; i < 3; i++) {
      const handle = `crash-${process.pid}-${Date.now().toString(36)}-${i}`;
      const created = await operators.createAgent({ handle });
      assert.ok(created.ok);
      agents.push({ agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret });
    }
    await setup.close();

    const dir = mkdtempSync(join(tmpdir(), 'ledger-crash-'));
    dirs.push(dir);
    const node = new LedgerNode(`crash-${kind.name}`, await freePort(), { LEDGER_DATABASE_URL: databaseUrl }, dir);
    const target = () => ({ name: node.name, url: node.url });
    const outcomes: Outcome[] = [];
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        await node.start();
        const load = new WriteLoad(agents.flatMap((agent) => [{ agent, target }, { agent, target }]), { pauseMs: 20 }).start();
        await load.acknowledgedAtLeast(3);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * MAX_EXTRA_LOAD_MS));
        await node.kill();
        outcomes.push(...await load.stop());
      }
      t.diagnostic(`${CYCLES} kills on ${kind.name}: ${summary(outcomes)}`);
      // Clients of a killed node get no answer; nothing else but 201s.
      for (const o of outcomes) assert.ok(o.status === 201 || o.status === 0, `${o.status} ${o.error}`);

      const store = openStore(databaseUrl);
      await store.migrate();
      try {
        const records = await assertAcknowledgedDurable(store, agents, outcomes);
        assert.ok(records >= acknowledged(outcomes).length);
        t.diagnostic(`${acknowledged(outcomes).length} acknowledged, ${records} recorded (the rest were in flight at a kill)`);

        await node.start();
        for (const agent of agents) {
          const verified = await ledgerVerify(`${node.url}/v1/export?agent=${agent.handle}`);
          assert.equal(verified.code, 0, verified.out);
        }
        await until('the global log to integrate every record', async () => {
          const res = await fetch(`${node.url}/v1/log/checkpoint`);
          return res.status === 200 && Number((await res.text()).split('\n')[1]) === records;
        });
        const log = await ledgerVerify(`${node.url}/v1/log`);
        assert.equal(log.code, 0, log.out);
      } finally {
        await store.close();
      }
      assert.doesNotMatch(node.output, /Unhandled|uncaught|FATAL ERROR/i);
    } finally {
      await node.terminate();
    }
  });
});
