// Issue 13: a sync killed with SIGKILL mid-import (a real process, `ledger brokers sync`) and run
// again records every fill exactly once, and the chain verifies, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';
import { startAlpacaSim, yearOfFills, type AlpacaSim } from '../sim/alpaca.ts';
import { brokerTestApp, connectAlpaca, executions, MASTER_KEY, type BrokerTestApp } from './wiring-support.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FILLS = 30_000;

function syncProcess(id: string, databaseUrl: string, simUrl: string, onProgress?: (output: string) => void): { child: ChildProcess; exit: Promise<{ code: number | null; signal: string | null }>; progress: () => string } {
  const child = spawn(process.execPath, ['bin/ledger.js', 'brokers', 'sync', id, '--database', databaseUrl], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEDGER_MASTER_KEY: MASTER_KEY, LEDGER_ALPACA_TRADING_URL: simUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => {
    output += d;
    onProgress?.(output);
  });
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exit, progress: () => output };
}

await forEachStore('a broker sync killed with SIGKILL', (kind) => {
  let sim: AlpacaSim;
  let url: string;
  let store: LedgerStore;
  let t: BrokerTestApp;

  before(async () => {
    sim = await startAlpacaSim({ scenario: yearOfFills(FILLS) });
    url = await kind.freshUrl();
    store = openStore(url);
    await store.migrate();
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  test('killed mid-import and run again: every fill recorded exactly once, the chain verifies', async () => {
    const owner = await t.agent();
    const id = await connectAlpaca(t, owner.secret, sim);

    // Killed the moment it reports its first recorded fills: mid-import.
    const first = syncProcess(id, url, sim.url, (output) => {
      if (/[1-9]\d* recorded/.test(output)) first.child.kill('SIGKILL');
    });
    const killed = await first.exit;
    assert.equal(killed.signal, 'SIGKILL', `the sync was killed mid-import, not finished: ${first.progress().slice(-300)}`);
    const before = (await executions(store, owner.agentId)).length;
    assert.ok(before > 0 && before < FILLS, `part of the import was recorded before the kill (${before} of ${FILLS}): ${first.progress().slice(0, 600)}`);

    const second = syncProcess(id, url, sim.url);
    const finished = await second.exit;
    assert.equal(finished.code, 0, second.progress().slice(-500));

    const records = await executions(store, owner.agentId);
    const fillIds = records.map((r) => (JSON.parse(r.content) as { broker_fill_id: string }).broker_fill_id);
    assert.equal(new Set(fillIds).size, fillIds.length, 'no fill recorded twice');
    assert.deepEqual([...fillIds].sort(), sim.scenario.fills.map((f) => f.id).sort(), 'every fill recorded');
    await assertChainVerifies(store, owner);
  });
});
