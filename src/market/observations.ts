// Publishing the prices observed at receipt (rule 6: "Observations are public (on the record's
// proof and in the export) so anyone can check them"). It owns the public form of an observation,
// the proof's `price_observation` and what the export adds (a `price_observation` member on each
// decision line that has one, and their count in its header). None of it is hashed: records, chain entries and
// their bytes are untouched. Reads only the store, so a public read never waits on the provider.
// With provider `none` a decision's proof says it is unpriced (`not_configured`), made here from
// the composed provider (never stored), so a read thread answers it as the serving thread does.
import type { StoredRecord } from '../domain/types.ts';
import type { ExportAnnotations } from '../ledger/public/reads.ts';
import type { MarketData, MarketStore, PriceObservation } from './port.ts';

/** One observation as published: flat, every member present (null where it does not apply). */
export type ObservationView = {
  record_id: string;
  symbol: string;
  /** priced: the provider had a trade at or before asked_at; unpriced: it answered for good that it has none, or there is no provider. */
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
  /** When the service got the answer (after the record; later when the provider was failing); null when no provider was asked (`not_configured`). */
  observed_at: string | null;
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

/** The reason code of a decision unpriced because the node has no market-data provider. */
export const NOT_CONFIGURED = 'not_configured';

export class ObservationReads {
  /** `provider`: the node's configured one; with `none`, no decision waits for a price. */
  constructor(private readonly market: MarketStore, private readonly provider: Pick<MarketData, 'source' | 'description'>) {}

  /**
   * The proof's section: `price_observation` is the decision's observation, the `not_configured`
   * answer when the node has no provider, or null (an execution, or a decision not observed yet).
   * `settled` is false while a decision still waits for one.
   */
  async proofSection(record: StoredRecord): Promise<{ section: { price_observation: ObservationView | null }; settled: boolean }> {
    if (record.type !== 'decision') return { section: { price_observation: null }, settled: true };
    const found = await this.market.observationOf(record.id);
    const view = found ? observationView(found) : this.notConfigured(record);
    return { section: { price_observation: view }, settled: view !== null };
  }

  /**
   * What a decision not observed says on a node without a provider: unpriced, and why. It is not
   * stored: a provider configured later prices the decision at its recorded_at (docs/pricing.md).
   */
  private notConfigured(record: StoredRecord): ObservationView | null {
    if (this.provider.source !== 'none' || record.symbol === null) return null;
    return {
      record_id: record.id,
      symbol: record.symbol,
      status: 'unpriced',
      asked_at: record.recordedAt,
      price: null,
      provider_time: null,
      age_ms: null,
      stale: null,
      reason: `${NOT_CONFIGURED}: ${this.provider.description}`,
      source: 'none',
      feed: null,
      synthetic: false,
      observed_at: null,
    };
  }

  /**
   * What the export adds: the header's count of observed records, and the observation of each
   * decision line that has one (a line without one is exactly as before: nothing observed yet).
   * Never the `not_configured` answer: the export's ETag is taken over its header alone, so lines
   * that followed the node's configuration could change under an unchanged tag.
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
