// What the pricing job does after a decision is recorded, done directly by a test: the price of
// each decision's symbol at its recorded_at, from `provider`, saved as its observation (rule 6);
// then, as the job's next tick does, its scan cursor moved past what is now observed (so reports
// read the observed prefix from the priced_decisions projection, the rest record by record).
import type { MarketData } from '../../src/market/port.ts';
import type { MarketStore, PriceObservation, PriceSource } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';

export async function observeDecisions(store: LedgerStore, market: MarketStore, provider: MarketData, agentId: string, skip: (seq: number) => boolean = () => false): Promise<number> {
  const source = provider.source as PriceSource;
  const rows: PriceObservation[] = [];
  for (let after = 0; ;) {
    const page = await store.listChain(agentId, after, 1000);
    if (page.length === 0) break;
    for (const r of page) {
      after = r.chainSeq;
      if (r.type !== 'decision' || skip(r.chainSeq) || (await market.observationOf(r.id))) continue;
      const symbol = (JSON.parse(r.content) as { symbol: string }).symbol;
      const got = await provider.latestTrade(symbol, new Date(r.recordedAt));
      const base = { recordId: r.id, agentId, chainSeq: r.chainSeq, symbol, askedAt: r.recordedAt, observedAt: r.recordedAt, source, synthetic: provider.synthetic };
      rows.push(got.ok
        ? { ...base, feed: got.value.feed, status: 'priced', price: got.value.price, providerTime: got.value.provider_time, ageMs: got.value.age_ms, stale: got.value.stale }
        : { ...base, feed: null, status: 'unpriced', reason: `${got.error.code}: ${got.error.message}` });
    }
  }
  await market.saveObservations(rows);
  await market.pendingPrices(source, 1);
  return rows.length;
}
