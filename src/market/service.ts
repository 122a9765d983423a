// Pricing in a serving process: the pricing job (pricing.ts) for the configured provider, beside
// the HTTP service until shutdown, and its status for /readyz. With provider `none` nothing runs
// and the status says why. On PostgreSQL every API node starts one; the store's hold lets one of
// them price at a time.
import type { LedgerStore } from '../store/port.ts';
import { ObservationReads } from './observations.ts';
import type { MarketData } from './port.ts';
import { PricingJob, pricingOff, type PricingOptions, type PricingStatus } from './pricing.ts';
import { DEFAULT_SYNTHETIC_SEED } from './select.ts';
import { SyntheticMarketData } from './synthetic.ts';

export type Pricing = { status(): PricingStatus; start(): void; stop(): Promise<void> };

/** `synthetic`: the model demo agents' decisions are priced by (LEDGER_SYNTHETIC_SEED), as `ledger demo` prices them. */
export function pricingService(
  store: LedgerStore,
  market: MarketData,
  onNotice: PricingOptions['onNotice'],
  tuning: Omit<PricingOptions, 'market' | 'store' | 'onNotice' | 'demo'> = {},
  synthetic: MarketData = new SyntheticMarketData(DEFAULT_SYNTHETIC_SEED),
): Pricing {
  if (market.source === 'none') return { status: () => pricingOff(market), start: () => undefined, stop: async () => undefined };
  const demo = { market: synthetic, isDemo: async (agentId: string) => (await store.findAgentById(agentId))?.demo === true };
  return new PricingJob({ ...tuning, market, store: store.market, onNotice, demo });
}

/** The public reads of the observations (proof and export), over the store's market tables and the node's provider. */
export function observationReads(store: LedgerStore, market: MarketData): ObservationReads {
  return new ObservationReads(store.market, market);
}
