// The pricing job killed with SIGKILL mid-batch (a real process) and started again observes each
// decision exactly once: what was saved before the kill stays as it was, the restarted job never
// asks the provider again for a decision already observed, and none is left out; both stores.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type { MarketStore, PriceObservation } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { openStore } from '../../src/store/open.ts';
import { forEachStore } from '../support/stores.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { postMany } from '../public/helpers.ts';
import { startAlpacaDataSim, type AlpacaDataSim } from '../sim/alpaca-data.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const N = 40;
const symbols = Array.from({ length: N }, (_, i) => `S${String(i).padStart(2, '0')}`);
const priceOf = (i: number) => 100 + i + 0.25;

function pricingProcess(databaseUrl: string, simUrl: string): { child: ChildProcess; exit: Promise<unknown>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/market/pricing-child.ts', databaseUrl, simUrl], {
    cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise((resolve) => child.on('exit', resolve));
  return { child, exit, output: () => output };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

await forEachStore('the pricing job killed with SIGKILL', (kind) => {
  let sim: AlpacaDataSim;
  let url: string;
  let store: LedgerStore;
  let market: MarketStore;
  let t: TestApp;

  before(async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    sim = await startAlpacaDataSim({
      keyId: 'PKKILLTEST', secret: 'sim-secret-kill', delayMs: 40,
      trades: Object.fromEntries(symbols.map((s, i) => [s, [{ t: at, p: priceOf(i) }]])),
    });
    url = await kind.freshUrl();
    store = openStore(url);
    await store.migrate();
    market = store.market;
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  test('killed mid-batch and started again: every decision observed exactly once, none asked for twice once saved', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, N, (i) => ({ symbol: symbols[i], action: 'BUY' }));

    const first = pricingProcess(url, sim.url);
    await until('a dozen provider calls', () => sim.requests.length >= 12);
    first.child.kill('SIGKILL');
    await first.exit;
    const askedBefore = sim.requests.length;
    const saved = await market.observationsOf(a.agentId, 0, N);
    assert.ok(saved.length > 0 && saved.length < N, `killed mid-way: ${saved.length} of ${N} observed (${first.output()})`);

    const second = pricingProcess(url, sim.url);
    try {
      await until('every decision observed', async () => (await market.countObservations(a.agentId, N)) === N);
    } finally {
      second.child.kill('SIGTERM');
      await second.exit;
    }

    const all = await market.observationsOf(a.agentId, 0, N + 1);
    assert.deepEqual(all.map((o) => o.recordId), ids, 'one observation per decision, in chain order');
    for (const [i, o] of all.entries()) {
      assert.equal(o.status, 'priced');
      assert.equal((o as Extract<PriceObservation, { status: 'priced' }>).price, String(priceOf(i)));
      assert.equal(o.symbol, symbols[i]);
    }
    const bySeq = new Map(all.map((o) => [o.chainSeq, o]));
    for (const o of saved) assert.deepEqual(bySeq.get(o.chainSeq), o, 'what was saved before the kill is unchanged');
    const savedSymbols = new Set(saved.map((o) => o.symbol));
    const askedAgain = sim.requests.slice(askedBefore).map((r) => r.query.get('symbols')).filter((s) => savedSymbols.has(s ?? ''));
    assert.deepEqual(askedAgain, [], 'the restarted job never asks again for a decision already observed');
    assert.equal(await market.countPendingPrices(100), 0);
  });
});
