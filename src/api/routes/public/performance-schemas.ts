// Schemas of GET /v1/agents/{handle}/performance and of the profile's portfolios and performance:
// every figure perf_v1 and perf_v2 publish (docs/perf_v1.md), with an example computed by the
// engine from the method doc's worked example.
import { Type, type TSchema } from '@sinclair/typebox';
import { stringEnum } from '../../schemas.ts';
import { OUTCOMES_LIMIT, OUTCOME_CSV_COLUMNS, SCAN_LIMIT } from '../../../performance/outcome-pages.ts';
import { CSV_COLUMNS } from '../../../performance/views.ts';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DATE = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });
const DECIMAL = (description: string) => Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', description });
const PORTFOLIOS = ['model', 'broker'] as const;

export const PerformanceQuery = Type.Object({
  portfolio: Type.Optional(stringEnum(PORTFOLIOS, { default: 'model', description: '`model`: the decisions at their receipt price; `broker`: the imported fills (trade-derived).' })),
  format: Type.Optional(stringEnum(['json', 'csv'] as const, { default: 'json', description: `\`csv\`: the daily series alone, columns ${CSV_COLUMNS.join(', ')}.` })),
  benchmark_return: Type.Optional(stringEnum(['total', 'price'] as const, { default: 'total', description: 'perf_v2: the benchmark\'s total return (dividends reinvested at the ex-date close) or its price return (splits only). A perf_v1 report\'s benchmark is always its price return.' })),
}, { additionalProperties: false });

export const InputsQuery = Type.Object({
  portfolio: Type.Optional(stringEnum(PORTFOLIOS, { default: 'model', description: 'The portfolio whose report the inputs are of.' })),
}, { additionalProperties: false });

export const INPUTS_DESCRIPTION = [
  'Every input of the portfolio\'s report (the one GET /v1/agents/{handle}/performance answers, brought up to date first), so that anyone can compute it again: `ledger verify --performance <agent URL>` does, with the documented method, after checking that each record line is the agent\'s chain\'s record (its content hash, the chain through through_seq, the log), and names the first figure that differs. NDJSON (`application/x-ndjson`, format `perf_inputs_v1`, docs/perf_v1.md §8), streamed in bounded memory as the client reads.',
  'Line 1, the header: `{"object":"performance_inputs","format":"perf_inputs_v1","agent","portfolio","method","through_seq","as_of","computed_at","start_value","price_source","synthetic","benchmark":{"symbol","inception_price"},"closes_from":{"symbols","benchmark"},"actions_known":{"<symbol>":{"from","through"}}}`: the report\'s through_seq and as_of say which report these are the inputs of; `actions_known` (perf_v2) the days whose corporate actions the service knew when it computed it (docs/perf_v1.md §4.2).',
  'Then `{"kind":"record","type":"decision"|"execution","chain_seq","id","recorded_at","symbol","content","observation"}` for each record applied, in chain order (`content`: the canon_v1 content text the chain hashes; `observation`: the price at receipt);',
  '`{"kind":"corporate_action","provider_id","revision","source","type","symbol","ex_date","payable_date","process_date","record_date","old_rate","new_rate","rate","special","seen_at","raw"}` for each version of each corporate action the report was given;',
  '`{"kind":"close","symbol","date","close","fetched_at"}` for each stored raw close of each symbol of the records (from the inception date) and of the benchmark (from 10 days before it), by symbol then date;',
  'last `{"kind":"end","records","corporate_actions","closes"}`: a bundle without it was cut short. 404 not_found while the portfolio has no report.',
].join('\n\n');

const METHOD = stringEnum(['perf_v1', 'perf_v2'] as const, { description: 'The method of the figures (docs/perf_v1.md): perf_v2 applies corporate actions to raw closes.' });
const BENCHMARK_BASIS = stringEnum(['price_return', 'total_return', 'partial_return'] as const, { description: '`total_return`: dividends reinvested at the ex-date close (perf_v2\'s default); `price_return`: splits only (perf_v1, or benchmark_return=price); `partial_return` (perf_v2): the service did not know all the benchmark\'s corporate actions for the period (`benchmark.missing` says which days; caveat `benchmark_actions_missing`), so its figures are neither.' });
const Missing = Type.Object({
  symbol: Type.String(),
  known: nullable(Type.Object({ from: DATE, through: DATE }, { description: 'The days whose actions (by ex-date) the service had asked the provider about; null: never.' })),
  from: DATE, through: DATE,
}, { description: 'perf_v2: a symbol whose corporate actions the report needed from `from` through `through` and did not all know.' });
const CAVEAT_CODES = [
  'synthetic_prices', 'model_portfolio', 'trade_derived', 'time_weighted', 'benchmark_price_return', 'benchmark_total_return', 'benchmark_actions_missing',
  'corporate_actions_applied', 'corporate_actions_missing', 'corporate_actions_not_applied', 'corporate_action_not_applied', 'restated', 'mixed_price_sources', 'awaiting_price', 'stale',
] as const;

const Metric = Type.Object({
  value: nullable(Type.String({ description: 'Decimal text; null below the metric\'s minimum history.' })),
  reason: Type.Optional(Type.String({ description: 'Why value is null.' })),
}, { description: 'A figure, or null with the reason.' });

const Drawdown = Type.Object({
  value: nullable(DECIMAL('Worst value / running peak − 1 (≤ 0).')),
  peak_date: Type.Optional(nullable(DATE)),
  trough_date: Type.Optional(nullable(DATE)),
  recovery_date: Type.Optional(nullable(DATE)),
  reason: Type.Optional(Type.String()),
});

const metricFields = {
  days: Type.Integer({ description: 'Calendar days from the first record\'s date to the last valued date.' }),
  daily_returns: Type.Integer({ description: 'n, the number of daily returns.' }),
  cumulative_return: Metric,
  time_weighted_return: Metric,
  annualised_return: Metric,
  volatility: Metric,
  sharpe: Metric,
  sortino: Metric,
  max_drawdown: Drawdown,
};

export const BenchmarkMetrics = Type.Object(metricFields, { description: 'perf_v1 metrics of a series (docs/perf_v1.md §5).' });
export const Metrics = Type.Object({ ...metricFields, beta: Metric, excess_return: Metric }, { description: 'perf_v1 metrics of the portfolio, with beta and excess return against the benchmark.' });

const HitRate = Type.Object({
  value: nullable(DECIMAL('hits / counted, 6 decimals; null below 20 resolved outcomes.')),
  reason: Type.Optional(Type.String()),
  hits: Type.Integer(),
  counted: Type.Integer({ description: 'Resolved directional outcomes (HOLD and pending ones are not counted).' }),
});

export const HitRates = Type.Object({ '1d': HitRate, '5d': HitRate, '21d': HitRate, stated: HitRate }, {
  description: 'Share of BUY/INCREASE decisions followed by a rise and SELL/REDUCE/CLOSE by a fall, 1, 5 and 21 closes after the decision and at its stated time_horizon.',
});

const Caveat = Type.Object({
  code: Type.String({ description: `What the figures are and are not: ${CAVEAT_CODES.join(', ')} (a client ignores a code it does not know).` }),
  message: Type.String(),
});

export const SeriesRow = Type.Object({
  date: DATE,
  value: DECIMAL('The portfolio\'s value at that day\'s close, USD, 2 decimals.'),
  daily_return: DECIMAL('value / previous value − 1 (the first against start_value), 6 decimals.'),
  benchmark_value: nullable(DECIMAL('start_value × benchmark close / base price, 2 decimals.')),
});

const Position = Type.Object({ symbol: Type.String(), quantity: DECIMAL('Held quantity (negative: short, broker only).'), mark: DECIMAL('Last price applied: receipt price, fill price or close.') });

const Holdings = Type.Object({
  cash: DECIMAL('Cash, exact.'),
  receivable: Type.Optional(DECIMAL('perf_v2: cash dividends accrued on their ex-date and not yet paid (their payable date is after as_of); included in the value.')),
  positions: Type.Array(Position, { description: 'The largest positions by value (at most 500 here, 20 on the profile).' }),
  positions_total: Type.Integer(),
});

const ACTION_TYPE = Type.String({ description: '`forward_split`, `reverse_split`, `cash_dividend`, `stock_dividend`, or another type of the provider (not applied).' });

const AppliedAction = Type.Object({
  date: DATE,
  phase: stringEnum(['ex', 'payable', 'in_lieu'] as const, { description: '`ex`: shares changed or dividend accrued on the ex-date; `payable`: the dividend paid into cash; `in_lieu`: a fraction left by a reverse split paid in cash at that close.' }),
  symbol: Type.String(),
  type: ACTION_TYPE,
  provider_id: Type.String({ description: 'The provider\'s id of the action.' }),
  ratio: nullable(Type.String({ description: 'Share actions: `new:old` shares.' })),
  rate: nullable(DECIMAL('Cash dividends: cash per share.')),
  quantity_before: DECIMAL('Quantity held before the event.'),
  quantity_after: DECIMAL('Quantity held after it.'),
  cash_before: DECIMAL('Cash before the event.'),
  cash_after: DECIMAL('Cash after it.'),
  amount: nullable(DECIMAL('Cash accrued (ex), paid (payable) or paid in lieu; null when no cash moves.')),
  fraction: Type.Optional(DECIMAL('in_lieu: the fraction of a share paid.')),
  price: Type.Optional(DECIMAL('in_lieu: the close it was paid at.')),
}, { description: 'A corporate action\'s effect on the portfolio.' });

const NotApplied = Type.Object({
  date: DATE, symbol: Type.String(), type: ACTION_TYPE, provider_id: Type.String(),
  reason: Type.String({ description: 'Why the holding is left as it was (a type perf_v2 does not apply, or terms it cannot use).' }),
});

const CorporateActions = Type.Object({
  events: Type.Array(AppliedAction, { description: 'Every event applied to the holdings, in date order.' }),
  not_applied: Type.Array(NotApplied, { description: 'Actions touching a holding or the benchmark that were not applied (a caveat names them).' }),
  missing: Type.Optional(Type.Array(Missing, { description: 'Holdings whose corporate actions the service did not all know while held (caveat `corporate_actions_missing`); absent in a report computed before this was recorded.' })),
}, { description: 'perf_v2: the corporate actions of the symbols held (docs/perf_v1.md §4.2).' });

const Restatement = Type.Object({
  from: DATE,
  actions: Type.Array(Type.Object({
    from: DATE, provider_id: Type.String(), type: ACTION_TYPE, symbol: Type.String(),
    reason: stringEnum(['late_action', 'correction'] as const, { description: '`late_action`: learned after a close it changes was stored (a report could value past its effective date without it); `correction`: a new revision of a known action, learned likewise.' }),
    seen_at: Type.String({ format: 'date-time', description: 'When the ledger learned it.' }),
    close_stored_at: Type.String({ format: 'date-time', description: 'When the ledger stored the first close of the symbol dated on or after the action\'s effective date: before `seen_at`.' }),
  })),
}, { description: 'perf_v2: the figures from `from` on differ from those published before these actions were known (caveat `restated`).' });

const BenchmarkEvent = Type.Object({
  date: DATE, type: ACTION_TYPE, provider_id: Type.String(),
  ratio: nullable(Type.String({ description: 'Share actions: `new:old`.' })),
  rate: nullable(DECIMAL('Cash dividends: cash per share.')),
  close: DECIMAL('The close the action was applied at (dividends reinvested at the ex-date close).'),
  total_factor: DECIMAL('The total-return index\'s cumulative factor after it.'),
  price_factor: DECIMAL('The price-return index\'s cumulative factor after it.'),
});

const PriceSourceView = Type.Object({
  source: stringEnum(['alpaca', 'synthetic'] as const),
  feed: nullable(Type.String()),
  synthetic: Type.Boolean(),
  description: Type.String(),
});

const BenchmarkView = Type.Object({
  symbol: Type.String(),
  basis: BENCHMARK_BASIS,
  base_price: nullable(DECIMAL('The benchmark price the start value is compared with.')),
  base_from: nullable(stringEnum(['inception_price', 'previous_close', 'first_close'] as const, { description: '`inception_price`: observed at the first record\'s receipt; else the last close before its date; else the first close.' })),
  metrics: nullable(BenchmarkMetrics),
  events: Type.Optional(Type.Array(BenchmarkEvent, { description: 'perf_v2: the benchmark\'s corporate actions applied to its index.' })),
  missing: Type.Optional(nullable(Missing)),
});

const Note = Type.Object({ record_id: Type.String(), code: Type.String(), message: Type.String() });

const Links = Type.Object({
  self: Type.String({ format: 'uri' }), csv: Type.String({ format: 'uri' }), profile: Type.String({ format: 'uri' }), export: Type.String({ format: 'uri' }),
  outcomes: Type.Optional(Type.String({ format: 'uri', description: 'Model only: each decision\'s outcomes (GET /v1/agents/{handle}/performance/outcomes).' })),
});

const Reconciliation = Type.Object({
  connection_id: Type.String(),
  broker: Type.String(),
  taken_at: Type.String({ format: 'date-time' }),
  mismatches: Type.Integer({ description: 'Symbols whose reported quantity differs from what the imported fills add up to.' }),
  positions: Type.Array(Type.Object({ symbol: Type.String(), implied: Type.String(), reported: Type.String(), matches: Type.Boolean() })),
});

const PORTFOLIO = stringEnum(PORTFOLIOS);

export const PerformanceComputed = Type.Object({
  object: Type.Literal('performance'),
  agent: Type.String(),
  portfolio: PORTFOLIO,
  status: Type.Literal('computed'),
  method: METHOD,
  basis: stringEnum(['decisions_at_receipt_price', 'trade_derived', 'time_weighted'] as const),
  synthetic: Type.Boolean({ description: 'True when the prices come from the synthetic model: not market data.' }),
  price_source: PriceSourceView,
  as_of: nullable(DATE),
  computed_at: Type.String({ format: 'date-time' }),
  through_seq: Type.Integer({ description: 'The chain seq of the last record the report includes.' }),
  stale: nullable(Type.String({ description: 'Why the report could not be brought up to date (a provider failure); null when current.' })),
  inception: nullable(Type.String({ description: 'The first record\'s instant: the curve starts on its date.' })),
  start_value: DECIMAL('100000.00 USD.'),
  caveats: Type.Array(Caveat),
  metrics: Metrics,
  benchmark: BenchmarkView,
  hit_rate: nullable(HitRates),
  holdings: Holdings,
  records: Type.Object({
    records: Type.Integer({ description: 'Decisions (model) or fills (broker) applied.' }),
    unpriced: Type.Integer({ description: 'Decisions without a price at receipt (not applied).' }),
    traded: Type.Integer({ description: 'Records that changed a holding.' }),
    pending_outcomes: Type.Integer(),
  }),
  notes: Type.Object({
    counts: Type.Record(Type.String(), Type.Integer(), { description: 'Every accounting note, counted by code.' }),
    recent: Type.Array(Note, { description: 'The 20 newest notes.' }),
  }),
  corporate_actions: Type.Optional(CorporateActions),
  restatement: Type.Optional(nullable(Restatement)),
  reconciliation: nullable(Type.Array(Reconciliation, { description: 'Broker: the latest positions reported by each connection against the imported fills.' })),
  series: Type.Array(SeriesRow, { description: 'One row per benchmark trading day from the first record\'s date to as_of (about 253 a year).' }),
  links: Links,
});

export const PerformanceUnavailable = Type.Object({
  object: Type.Literal('performance'),
  agent: Type.String(),
  portfolio: PORTFOLIO,
  status: Type.Literal('unavailable'),
  code: stringEnum(['no_records', 'no_market_data', 'awaiting_price'] as const),
  reason: Type.String(),
  method: METHOD,
  links: Links,
});

export const PerformanceResponse = Type.Union([PerformanceComputed, PerformanceUnavailable], {
  description: 'A portfolio\'s daily series and metrics (perf_v2, or perf_v1 for a report computed before it), or why there are none yet. Bounded by the agent\'s age: about 70 bytes per trading day (85 KB for five years).',
});

const Unavailable = Type.Object({
  status: Type.Literal('unavailable'),
  code: stringEnum(['no_records', 'no_market_data', 'awaiting_price', 'provider_error'] as const),
  reason: Type.String(),
});

const Summary = Type.Object({
  status: Type.Literal('computed'),
  basis: stringEnum(['decisions_at_receipt_price', 'trade_derived', 'time_weighted'] as const),
  synthetic: Type.Boolean(),
  as_of: nullable(DATE),
  computed_at: Type.String({ format: 'date-time' }),
  stale: nullable(Type.String()),
  inception: nullable(Type.String()),
  metrics: Metrics,
  benchmark: Type.Object({ symbol: Type.String(), basis: BENCHMARK_BASIS, metrics: nullable(BenchmarkMetrics) }),
  hit_rate: nullable(HitRates),
  url: Type.String({ format: 'uri' }),
  csv_url: Type.String({ format: 'uri' }),
});

export const ProfilePortfolio = Type.Object({
  portfolio: PORTFOLIO,
  basis: stringEnum(['decisions_at_receipt_price', 'trade_derived', 'time_weighted'] as const),
  synthetic: Type.Boolean(),
  as_of: nullable(DATE),
  inception: nullable(Type.String()),
  start_value: Type.String(),
  value: DECIMAL('The last valued close (start_value before the first).'),
  cash: Type.String(),
  positions: Type.Array(Position),
  positions_total: Type.Integer(),
  performance_url: Type.String({ format: 'uri' }),
});

export const ProfilePerformance = nullable(Type.Object({
  method: METHOD,
  model: nullable(Type.Union([Summary, Unavailable])),
  broker: nullable(Type.Union([Summary, Unavailable])),
}, { description: 'Summaries of the model and broker portfolios; null when neither is computed (a caveat says why).' }));

// GET /v1/agents/{handle}/performance/outcomes

export const OutcomesQuery = Type.Object({
  portfolio: Type.Optional(stringEnum(['model'] as const, { default: 'model', description: 'Outcomes are those of decisions: the model portfolio only.' })),
  limit: Type.Integer({ minimum: 1, maximum: OUTCOMES_LIMIT.max, default: OUTCOMES_LIMIT.default, description: `Decisions per page, 1 to ${OUTCOMES_LIMIT.max}, default ${OUTCOMES_LIMIT.default}. A page also ends after ${SCAN_LIMIT} chain records (executions are read past), with has_more.` }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Opaque: pass next_cursor of the previous page. The page holds the decisions after it, in chain order.' })),
  format: Type.Optional(stringEnum(['json', 'csv'] as const, { default: 'json', description: `\`csv\`: the page's rows as text/csv, columns ${OUTCOME_CSV_COLUMNS.join(', ')}; the next page is in the Link header (rel="next").` })),
}, { additionalProperties: false });

const OutcomeCell = Type.Object({
  date: nullable(DATE),
  close: nullable(DECIMAL('The close that resolves the horizon, as the provider gave it.')),
  return: nullable(DECIMAL('close / receipt price − 1, 6 decimals (half-even).')),
  hit: nullable(Type.Boolean({ description: 'BUY/INCREASE: return > 0; SELL/REDUCE/CLOSE: return < 0; null for HOLD and while pending.' })),
  reason: nullable(Type.String({ description: 'Why there is no outcome (no price at receipt, pending, no closes) or no hit (HOLD); null otherwise.' })),
}, { description: 'A decision\'s outcome at one horizon.' });

const OutcomeRow = Type.Object({
  record_id: Type.String(),
  seq: Type.Integer({ description: 'The decision\'s chain seq.' }),
  symbol: Type.String(),
  action: stringEnum(['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'] as const),
  recorded_at: Type.String({ format: 'date-time' }),
  date: Type.String({ pattern: DATE.pattern, description: 'recorded_at\'s UTC date: the closes dated after it count.' }),
  price: nullable(DECIMAL('The price observed at receipt (its price_observation).')),
  price_reason: nullable(Type.String({ description: 'Why there is no price: not observed yet, or the provider\'s answer.' })),
  direction: Type.Union([Type.Literal(1), Type.Literal(-1), Type.Literal(0)], { description: '1: BUY, INCREASE; −1: SELL, REDUCE, CLOSE; 0: HOLD.' }),
  outcomes: Type.Object({ '1d': OutcomeCell, '5d': OutcomeCell, '21d': OutcomeCell }, { description: 'At the 1st, 5th and 21st close of the symbol dated after `date`.' }),
  stated: Type.Object({
    horizon: nullable(Type.String({ description: 'The decision\'s time_horizon, as written.' })),
    parsed: nullable(Type.Object({ kind: stringEnum(['trading_days', 'days', 'months'] as const), n: Type.Integer() }, { description: 'Weeks are read as 7 days, years as 12 months.' })),
    outcome: OutcomeCell,
  }),
});

export const OutcomesResponse = Type.Object({
  object: Type.Literal('list'),
  url: Type.String(),
  agent: Type.String(),
  portfolio: Type.Literal('model'),
  method: METHOD,
  status: stringEnum(['computed', 'unavailable'] as const, { description: 'The model report\'s status; while unavailable every outcome is null with the reason.' }),
  reason: nullable(Type.String()),
  as_of: nullable(Type.String({ pattern: DATE.pattern, description: 'The model report\'s as_of: closes dated up to it count, so the outcomes add up to its hit rates.' })),
  through_seq: nullable(Type.Integer()),
  synthetic: Type.Boolean(),
  price_source: nullable(PriceSourceView),
  data: Type.Array(OutcomeRow, { description: 'Decisions in chain order (executions are skipped).' }),
  has_more: Type.Boolean(),
  next_cursor: nullable(Type.String()),
  next: nullable(Type.String({ format: 'uri' })),
  links: Type.Object({ performance: Type.String({ format: 'uri' }), csv: Type.String({ format: 'uri' }), export: Type.String({ format: 'uri' }) }),
}, { description: `Each decision's outcomes (perf_v1 §5), a page at a time. About 1 KB per row: at most ${OUTCOMES_LIMIT.max} rows (about 500 KB).` });
