// Publishing the prices observed at receipt (rule 6: "Observations are public (on the record's
// proof and in the export) so anyone can check them"). It owns the public form of an observation,
// the proof's `price_observation` and what the export adds (a `price_observation` member on each
// decision line that has one, and their count in its header). None of it is hashed: records, chain entries and
// their bytes are untouched. Reads only the store, so a public read never waits on the provider.
import type { StoredRecord } from '../domain/types.ts';
import type { ExportAnnotations } from '../ledger/public/reads.ts';
import type { MarketStore, PriceObservation } from './port.ts';

/** One observation as published: flat, every member present (null where it does not apply). */
export type ObservationView = {
  record_id: string;
  symbol: string;
  /** priced: the provider had a trade at or before asked_at; unpriced: it answered for good that it has none. */
  status: 'priced' | 'unpriced';
  /** The decision's recorded_at: the instant priced. */
  asked_at: string;
  price: string | null;
  /** The provider's own timestamp of that trade, as the provider wrote it. */
  provider_time: string | null;
  /** asked_at − provider_time, in milliseconds. */
  age_ms: number | null;
  /** age_ms above the stale bound (15 minutes, docs/pricing.md): market closed, halted or a thin feed. */
  stale: boolean | null;
  reason: string | null;
  source: string;
  feed: string | null;
  synthetic: boolean;
  /** When the service got the answer (after the record; later when the provider was failing). */
  observed_at: string;
};

/** The member both the proof and the export lines carry. */
export const OBSERVATION_MEMBER = 'price_observation';

export function observationView(o: PriceObservation): ObservationView {
  const priced = o.status === 'priced';
  return {
    record_id: o.recordId,
    symbol: o.symbol,
    status: o.status,
    asked_at: o.askedAt,
    price: priced ? o.price : null,
    provider_time: priced ? o.providerTime : null,
    age_ms: priced ? o.ageMs : null,
    stale: priced ? o.stale : null,
    reason: priced ? null : o.reason,
    source: o.source,
    feed: o.feed,
    synthetic: o.synthetic,
    observed_at: o.observedAt,
  };
}

export class ObservationReads {
  constructor(private readonly market: MarketStore) {}

  /**
   * The proof's section: `price_observation` is the decision's observation, or null (an execution,
   * or a decision not observed yet). `settled` is false while a decision still waits for one.
   */
  async proofSection(recordId: string): Promise<{ section: { price_observation: ObservationView | null }; settled: boolean }> {
    const found = await this.market.observationOf(recordId);
    return { section: { price_observation: found ? observationView(found) : null }, settled: found !== null || !recordId.startsWith('dec_') };
  }

  /**
   * What the export adds: the header's count of observed records, and the observation of each
   * decision line that has one (a line without one is exactly as before: nothing observed yet).
   */
  exportAnnotations(): ExportAnnotations {
    const market = this.market;
    return {
      async header(agentId, throughSeq) {
        return { price_observations: await market.countObservations(agentId, throughSeq) };
      },
      async page(records) {
        const first = records[0];
        if (first === undefined) return () => null;
        // The page's seqs run consecutively, so its observations are at most records.length after the one before it.
        const found = await market.observationsOf(first.agentId, first.chainSeq - 1, records.length);
        const bySeq = new Map(found.map((o) => [o.chainSeq, o]));
        return (r: StoredRecord) => {
          const o = r.type === 'decision' ? bySeq.get(r.chainSeq) : undefined;
          return o ? { [OBSERVATION_MEMBER]: observationView(o) } : null;
        };
      },
    };
  }
}
