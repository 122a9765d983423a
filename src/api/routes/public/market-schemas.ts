// The price observation's schema (rule 6), on /v1/proof and on each decision line of /v1/export.
import { Type, type TSchema } from '@sinclair/typebox';

const nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});

export const PriceObservationView = Type.Object({
  record_id: Type.String({ description: 'The decision priced.' }),
  symbol: Type.String({ description: 'The decision\'s symbol, as recorded.' }),
  status: Type.Union([Type.Literal('priced'), Type.Literal('unpriced')], {
    description: 'priced: the provider had a trade at or before asked_at. unpriced: it answered for good that it has none, or the service has no market-data provider (reason says why).',
  }),
  asked_at: Type.String({ format: 'date-time', description: 'The decision\'s recorded_at: the instant priced (occurred_at is never used).' }),
  price: nullable(Type.String(), 'The last trade\'s price at or before asked_at, a decimal string as the provider\'s number reads; null when unpriced.'),
  provider_time: nullable(Type.String(), 'The provider\'s own timestamp of that trade, as it wrote it (RFC 3339, up to nanoseconds).'),
  age_ms: nullable(Type.Integer({ minimum: 0 }), 'asked_at − provider_time in milliseconds.'),
  stale: nullable(Type.Boolean(), 'true when age_ms is over 15 minutes (900000 ms): the market was closed, the symbol halted or the feed thin.'),
  reason: nullable(Type.String(), 'Why there is no price (`unknown_symbol: …`, `no_price: …`, `not_priced: …`, or `not_configured: …` when the service has no market-data provider: not stored, a provider configured later prices the decision); null when priced.'),
  source: Type.String({ description: '`alpaca` (Alpaca Market Data v2), `synthetic` (a seeded model, not market data) or `none` (no provider: `not_configured`).' }),
  feed: nullable(Type.String(), 'The provider\'s feed for stocks (Alpaca: iex, sip, …); null for crypto and when unpriced.'),
  synthetic: Type.Boolean({ description: 'true when the price comes from the synthetic model: never a market price.' }),
  observed_at: nullable(Type.String({ format: 'date-time' }), 'When the service got the answer: after the record, later when the provider was failing; null for `not_configured` (no provider was asked).'),
}, {
  description: 'The price observed at the decision\'s receipt (docs/pricing.md). Not hashed and not part of the record: the service\'s answer from its market-data source, published so anyone can check it against another source.',
  examples: [{
    record_id: 'dec_01JX0Z6Q4M8T2V7B3N5C9D1F0G', symbol: 'AAPL', status: 'priced', asked_at: '2025-06-02T14:00:00.123Z',
    price: '201.7', provider_time: '2025-06-02T13:59:59.874512Z', age_ms: 249, stale: false, reason: null,
    source: 'alpaca', feed: 'iex', synthetic: false, observed_at: '2025-06-02T14:00:01.020Z',
  }],
});
