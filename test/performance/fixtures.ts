// A service with performance over a real ledger store, and an agent with about fourteen months
// of decisions recorded through POST /v1/decisions with a held clock (every action, every sizing,
// sells beyond the holding, buys beyond cash, an instrument no provider prices), each priced at
// its receipt as the pricing job does.
import assert from 'node:assert/strict';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import type { MarketData, MarketStore } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { PerformanceStore } from '../../src/performance/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { observeDecisions } from '../support/observe.ts';

export const DAY = 86_400_000;

/** A clock the test moves. */
export class HeldClock {
  constructor(public t: number) {}
  now(): Date {
    return new Date(this.t);
  }
}

/** A sub-port of the store (its market or performance), counting the calls made through it, by method. */
export function counting<T extends object>(port: T): T & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  return new Proxy(port, {
    get: (target, key) => {
      if (key === 'calls') return calls;
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls[String(key)] = (calls[String(key)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as T & { calls: Record<string, number> };
}

/** A sub-port of the store with some of its methods replaced (the rest bound to it). */
export function overriding<T extends object>(port: T, replaced: Partial<T>): T {
  return new Proxy(port, {
    get: (target, key) => {
      if (Object.hasOwn(replaced, key)) return replaced[key as keyof T];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The store's stored reports, with none stored: a computation through them starts from scratch (and saves nothing). */
export function forgetting(reports: PerformanceStore): PerformanceStore {
  return overriding(reports, { report: async () => null, saveReport: async () => undefined });
}

export type PerformanceApp = { ledger: LedgerApp; store: LedgerStore; market: MarketStore; reports: PerformanceStore; provider: MarketData; clock: HeldClock; performance: PerformanceService };

export async function performanceApp(store: LedgerStore, provider: MarketData, market: MarketStore = store.market, start = Date.UTC(2025, 0, 6, 15, 0, 0)): Promise<PerformanceApp> {
  const clock = new HeldClock(start);
  const synthetic = provider.source === 'synthetic' ? provider : new SyntheticMarketData('decision-ledger');
  const reports = store.performance;
  const performance = new PerformanceService({ store, market, reports, provider, synthetic, benchmark: 'SPY', clock });
  const ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:', LEDGER_WRITE_LIMIT_PER_MIN: '1000000' }), clock, checkSignature: signatureChecker(store) }, { performance }));
  return { ledger, store, market, reports, provider, clock, performance };
}

const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'BTC/USD', 'KO'];
const HORIZONS = [null, '5 trading days', '2 weeks', '1 month', 'P3M', 'long term'];

/** Decision i of the year: every action and sizing in turn, with an unpriceable symbol now and then. */
function decision(i: number): Record<string, string> {
  const symbol = i % 37 === 36 ? 'brk b' : (SYMBOLS[i % SYMBOLS.length] as string);
  const action = ['BUY', 'INCREASE', 'HOLD', 'BUY', 'REDUCE', 'SELL', 'BUY', 'CLOSE'][i % 8] as string;
  const body: Record<string, string> = { symbol, action, thesis: `fixture decision ${i}` };
  const horizon = HORIZONS[i % HORIZONS.length];
  if (horizon) body.time_horizon = horizon;
  const sizing = i % 5;
  if (sizing === 0) body.target_allocation_pct = String(5 + (i % 30));
  else if (sizing === 1) body.quantity = i % 11 === 0 ? '100000' : String(1 + (i % 40)); // now and then far beyond cash or holding
  else if (sizing === 2) body.notional = String(1000 + 137 * (i % 50));
  else if (sizing === 3 && i % 2 === 0) { body.quantity = '3'; body.notional = '999'; } // the first size counts
  return body;
}

/** An agent with `n` decisions about every 1.4 days from the clock's start, priced at receipt; the clock ends a few days later. */
export async function recordYear(app: PerformanceApp, handle: string, n = 300): Promise<string> {
  const created = await new Operators(app.store, app.clock).createAgent({ handle });
  assert.ok(created.ok);
  for (let i = 0; i < n; i++) {
    const res = await postDecision(app.ledger, created.value.apiKey.secret, decision(i), idempotencyKey());
    assert.equal(res.statusCode, 201, res.body);
    app.clock.t += Math.round(1.4 * DAY) + 17 * 60_000 * (i % 7);
  }
  await observeDecisions(app.store, app.market, app.provider, created.value.agent.id);
  app.clock.t += 3 * DAY;
  return handle;
}
