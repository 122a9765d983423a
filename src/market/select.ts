// Chooses the market-data provider from the environment and checks its settings.
// It owns the LEDGER_MARKET_DATA family of variables. A bad setting is an error value naming the
// variable; nothing here throws.
//
//   LEDGER_MARKET_DATA            alpaca | synthetic | none; default alpaca when both keys are set, else none
//   LEDGER_ALPACA_DATA_KEY_ID     } required for alpaca
//   LEDGER_ALPACA_DATA_SECRET     }
//   LEDGER_ALPACA_DATA_URL        base URL (default https://data.alpaca.markets; tests point it at a simulator)
//   LEDGER_ALPACA_DATA_FEED       trades feed: iex (default) | sip | delayed_sip | otc | boats | overnight
//   LEDGER_ALPACA_DATA_BARS_FEED  daily-bars feed: sip (default) | iex | ...
//   LEDGER_ALPACA_DATA_PLAN       basic (default, 200 calls/min) | algo_trader_plus (10,000 calls/min)
//   LEDGER_SYNTHETIC_SEED         seed of the synthetic model (default decision-ledger)

import { ALPACA_DATA_URL, AlpacaMarketData, PLANS, STOCK_FEEDS, type AlpacaPlan, type StockFeed } from './alpaca.ts';
import { NoMarketData } from './none.ts';
import type { MarketData } from './port.ts';
import { SyntheticMarketData } from './synthetic.ts';

export const PROVIDERS = ['alpaca', 'synthetic', 'none'] as const;
export const DEFAULT_SYNTHETIC_SEED = 'decision-ledger';

export type SelectOptions = { fetch?: typeof fetch; now?: () => Date };
export type Selection = { ok: true; market: MarketData } | { ok: false; error: string };

export function selectMarketData(env: NodeJS.ProcessEnv = process.env, options: SelectOptions = {}): Selection {
  const keyId = env.LEDGER_ALPACA_DATA_KEY_ID || '';
  const secret = env.LEDGER_ALPACA_DATA_SECRET || '';
  const chosen = env.LEDGER_MARKET_DATA || (keyId && secret ? 'alpaca' : 'none');
  if (!(PROVIDERS as readonly string[]).includes(chosen)) {
    return { ok: false, error: `LEDGER_MARKET_DATA must be one of ${PROVIDERS.join(', ')}, got ${JSON.stringify(chosen)}` };
  }
  if (chosen === 'none') {
    const why = env.LEDGER_MARKET_DATA
      ? 'no market data: LEDGER_MARKET_DATA is none, so no decision is priced'
      : 'no market data: LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET are not set, so no decision is priced';
    return { ok: true, market: new NoMarketData(why) };
  }
  if (chosen === 'synthetic') {
    const seed = env.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED;
    if (seed.length > 200) return { ok: false, error: 'LEDGER_SYNTHETIC_SEED must be at most 200 characters' };
    return { ok: true, market: new SyntheticMarketData(seed) };
  }
  if (!keyId || !secret) {
    return { ok: false, error: 'LEDGER_MARKET_DATA=alpaca needs both LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET' };
  }
  const baseUrl = env.LEDGER_ALPACA_DATA_URL || ALPACA_DATA_URL;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    return { ok: false, error: `LEDGER_ALPACA_DATA_URL must be a URL, got ${JSON.stringify(baseUrl)}` };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, error: `LEDGER_ALPACA_DATA_URL must use https: or http:, got ${parsed.protocol}` };
  }
  const feed = oneOf(env, 'LEDGER_ALPACA_DATA_FEED', STOCK_FEEDS, 'iex');
  if (!feed.ok) return feed;
  const barsFeed = oneOf(env, 'LEDGER_ALPACA_DATA_BARS_FEED', STOCK_FEEDS, 'sip');
  if (!barsFeed.ok) return barsFeed;
  const plan = oneOf(env, 'LEDGER_ALPACA_DATA_PLAN', Object.keys(PLANS) as AlpacaPlan[], 'basic');
  if (!plan.ok) return plan;
  return {
    ok: true,
    market: new AlpacaMarketData({
      keyId,
      secret,
      baseUrl,
      feed: feed.value as StockFeed,
      barsFeed: barsFeed.value as StockFeed,
      plan: plan.value as AlpacaPlan,
      fetch: options.fetch,
      now: options.now,
    }),
  };
}

function oneOf(env: NodeJS.ProcessEnv, name: string, allowed: readonly string[], fallback: string): { ok: true; value: string } | { ok: false; error: string } {
  const value = env[name] || fallback;
  if (!allowed.includes(value)) return { ok: false, error: `${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}` };
  return { ok: true, value };
}
