// A crash loop on one store: the real service (`ledger serve`) is killed with SIGKILL under write
// load, again and again. Four processes take turns on the same database: while one is under load
// and killed, the others start, so that start-ups (most of a cycle's time) overlap. Afterwards
// every write a client got a 201 for is in its chain with the id and seq it was told, every chain
// is gapless and passes `ledger verify`, and the global log holds every record and verifies too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { openStore } from '../../src/store/open.ts';
import { LedgerNode } from './ledger-node.ts';
import { acknowledged, assertAcknowledgedDurable, ledgerVerify, summary, WriteLoad, type LoadAgent, type Outcome } from './load.ts';
import { longOrShort } from './long.ts';
import { freePort } from './ports.ts';
import type { StoreKind } from './stores.ts';

/** 20 kills in CI; 200 in the long variant (LEDGER_TEST_LONG=1); LEDGER_CRASH_CYCLES sets the count. */
export const CRASH_CYCLES = Number(process.env.LEDGER_CRASH_CYCLES ?? longOrShort(200, 20));
/** How long the load runs past its first acknowledgements before the kill, at most. */
const MAX_EXTRA_LOAD_MS = longOrShort(1_000, 150);

async function until(what: string, check: () => Promise<boolean>, ms = 60_000, context = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function agentsIn(databaseUrl: string): Promise<LoadAgent[]> {
  const store = openStore(databaseUrl);
  await store.migrate();
  try {
    const operators = new Operators(store, systemClock);
    const agents: LoadAgent[] = [];
    for (let i = 0; i < 3; i++) {
      const handle = `crash-${process.pid}-${Date.now().toString(36)}-${i}`;
      const created = await operators.createAgent({ handle });
      assert.ok(created.ok);
      agents.push({ agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret });
    }
    return agents;
  } finally {
    await store.close();
  }
}

export async function crashLoop(kind: StoreKind, t: TestContext, cycles = CRASH_CYCLES): Promise<void> {
  const databaseUrl = await kind.freshUrl();
  const agents = await agentsIn(databaseUrl);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-crash-'));
  const env = { LEDGER_DATABASE_URL: databaseUrl };
  const nodes: LedgerNode[] = [];
  for (const name of ['a', 'b', 'c', 'd']) nodes.push(new LedgerNode(`${kind.name}-${name}`, await freePort(), env, dir));
  // Each node's start in progress or done; a killed node is started again at once, beside the others.
  const begin = (n: LedgerNode) => {
    const started = n.start();
    started.catch(() => undefined); // awaited (and failed) in its turn
    return started;
  };
  const starting = new Map(nodes.map((n) => [n, begin(n)]));
  const outcomes: Outcome[] = [];
  try {
    for (let cycle = 0; cycle < cycles; cycle++) {
      const current = nodes[cycle % nodes.length]!;
      await starting.get(current);
      const target = () => ({ name: current.name, url: current.url });
      const load = new WriteLoad(agents.flatMap((agent) => [{ agent, target }, { agent, target }]), { pauseMs: 20 }).start();
      await load.acknowledgedAtLeast(3, 60_000).catch((err: Error) => {
        throw new Error(`${err.message}\n${current.name}'s output:\n${current.output.slice(-4000)}`);
      });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * MAX_EXTRA_LOAD_MS));
      await current.kill();
      outcomes.push(...await load.stop());
      if (cycle + nodes.length < cycles) starting.set(current, begin(current));
    }
    await Promise.all([...starting.values()]);
    await Promise.all(nodes.map((n) => n.kill()));
    t.diagnostic(`${cycles} kills on ${kind.name}: ${summary(outcomes)}`);
    // Clients of a killed node get no answer; nothing else but 201s.
    for (const o of outcomes) assert.ok(o.status === 201 || o.status === 0, `${o.status} ${o.error}`);

    const store = openStore(databaseUrl);
    await store.migrate();
    let records: number;
    try {
      records = await assertAcknowledgedDurable(store, agents, outcomes);
    } finally {
      await store.close();
    }
    assert.ok(records >= acknowledged(outcomes).length);
    t.diagnostic(`${acknowledged(outcomes).length} acknowledged, ${records} recorded (the rest were in flight at a kill)`);

    const node = nodes[0]!;
    await node.start();
    for (const agent of agents) {
      const verified = await ledgerVerify(`${node.url}/v1/export?agent=${agent.handle}`);
      assert.equal(verified.code, 0, verified.out);
    }
    await until('the global log to integrate every record', async () => {
      const res = await fetch(`${node.url}/v1/log/checkpoint`);
      return res.status === 200 && Number((await res.text()).split('\n')[1]) === records;
    }, 60_000, () => nodes.map((n) => n.output.slice(-3000)).join('\n'));
    const log = await ledgerVerify(`${node.url}/v1/log`);
    assert.equal(log.code, 0, log.out);
    for (const n of nodes) assert.doesNotMatch(n.output, /Unhandled|uncaught|FATAL ERROR/i);
  } finally {
    await Promise.all(nodes.map((n) => n.terminate()));
    rmSync(dir, { recursive: true, force: true });
  }
}
