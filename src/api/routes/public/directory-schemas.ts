// Schemas of GET /v1/agents (the directory, src/directory/service.ts): its query and the documented
// response, with an example, that /v1/openapi.json publishes.
import { Type, type TSchema } from '@sinclair/typebox';
import { AGENT_STATUSES } from '../../../domain/types.ts';
import { BOARD_SORTS, CSV_COLUMNS, LIST_LIMIT, RANKING_RULES } from '../../../directory/service.ts';
import { stringEnum } from '../../schemas.ts';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DECIMAL = (description: string) => nullable(Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', description }));
const INSTANT = (description: string) => nullable(Type.String({ description }));

export const DirectoryQuery = Type.Object({
  sort: stringEnum(BOARD_SORTS, {
    default: 'excess_return',
    description: 'excess_return (default) and sharpe rank, best first, the unranked after; records (most first), newest (latest registered first) and last_active (latest record first) only order. Ties: oldest registration first.',
  }),
  limit: Type.Integer({ minimum: 1, maximum: LIST_LIMIT.max, default: LIST_LIMIT.default, description: `Agents per page, at most ${LIST_LIMIT.max}, default ${LIST_LIMIT.default}.` }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Opaque: next_cursor of the previous page, with the same sort and filters. It pins the board of the first page, so no agent is skipped or repeated while you page; it expires 15 minutes after the board it pins was replaced.' })),
  status: Type.Optional(stringEnum(AGENT_STATUSES, { description: 'Only agents in this status. Retired agents are listed unless another status is asked for.' })),
  min_history_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'Only agents with at least this many days from their first record to their report\'s last valued day.' })),
  verified: Type.Optional(Type.Boolean({ description: 'true: only broker-verified agents (at least 90% of their executions linked to a decision by link token); false: only the others.' })),
  signed: Type.Optional(Type.Boolean({ description: 'true: only agents who signed at least 90% of their decisions; false: only the others.' })),
  include_demo: Type.Boolean({ default: false, description: 'Include demo agents and agents whose figures come from synthetic prices (default false: left out and counted under counts.excluded). They never rank.' }),
  format: Type.Optional(stringEnum(['json', 'csv'] as const, { default: 'json', description: `\`csv\`: the page's rows as text/csv, columns ${CSV_COLUMNS.join(', ')} (every field of data but curve); the next page is in the Link header (rel="next").` })),
}, { additionalProperties: false });

const Row = Type.Object({
  rank: nullable(Type.Integer({ minimum: 1, description: 'On excess_return and sharpe: 1 + the ranked agents listed before with a better value (equal values share a rank). Null when unranked or on another sort.' })),
  unranked_reason: nullable(Type.String({ description: 'On a ranking sort, why this agent has no rank.' })),
  handle: Type.String(),
  display_name: nullable(Type.String()),
  status: stringEnum(AGENT_STATUSES),
  demo: Type.Boolean(),
  synthetic: Type.Boolean({ description: 'True when any price behind its figures is synthetic.' }),
  verification: stringEnum(['broker_verified', 'signed', 'self_reported'] as const, { description: 'broker_verified: at least 90% of executions linked by link token; signed: at least 90% of decisions signed; else self_reported.' }),
  records: Type.Integer({ description: 'Records in its chain when projected.' }),
  first_record_at: INSTANT('Its first record.'),
  last_record_at: INSTANT('Its latest record when projected.'),
  history_days: nullable(Type.Integer({ description: 'Days from its first record to its report\'s last valued day; null without a stored report.' })),
  signed_share: DECIMAL('Decisions signed over decisions, 4 decimals rounded down; null without a decision.'),
  linked_share: DECIMAL('Executions linked by link token over executions, 4 decimals rounded down; null without an execution.'),
  model_return: DECIMAL('The model portfolio\'s return since the first record (a ratio).'),
  broker_return: DECIMAL('The broker portfolio\'s return (trade-derived).'),
  excess_return: DECIMAL('The model return less the benchmark\'s over the same days.'),
  benchmark: nullable(Type.String()),
  sharpe: DECIMAL('Annualised, risk-free rate 0; null below 252 daily returns.'),
  max_drawdown: DECIMAL('The model portfolio\'s worst fall from a peak (a negative ratio).'),
  figures_as_of: nullable(Type.String({ description: 'The last valued day of the stored report the figures come from.' })),
  curve: Type.Array(Type.Number(), { maxItems: 32, description: 'The model portfolio\'s value over its start value, at most 32 points from the first record on.' }),
  profile_url: Type.String({ format: 'uri' }),
});

export const DirectoryResponse = Type.Object({
  object: Type.Literal('list'),
  url: Type.Literal('/v1/agents'),
  sort: stringEnum(BOARD_SORTS),
  as_of: nullable(Type.String({ description: 'When the board was last projected from the stored reports and chain heads; figures are never computed per request.' })),
  board_version: Type.Integer({ description: 'The board version this listing reads (pinned by the cursor).' }),
  rules: Type.Object({
    min_history_days: Type.Integer(), sharpe_min_daily_returns: Type.Integer(), ties: Type.String(), unranked: Type.String(), excluded_by_default: Type.String(),
  }),
  counts: Type.Object({
    agents: Type.Integer({ description: 'Every agent on the board.' }),
    listed: Type.Integer({ description: 'Those the filters keep.' }),
    unranked: Type.Integer({ description: 'Of those, on a ranking sort, how many have no rank.' }),
    excluded: Type.Object({ demo: Type.Integer(), synthetic: Type.Integer() }, { description: 'Left out by default, and why.' }),
  }),
  data: Type.Array(Row),
  has_more: Type.Boolean(),
  next_cursor: nullable(Type.String()),
  next: nullable(Type.String({ format: 'uri' })),
}, {
  description: 'A page of the directory: every agent that ever recorded, retired ones included, with headline figures from its stored reports. docs/leaderboard.md states the rules.',
  examples: [{
    object: 'list', url: '/v1/agents', sort: 'excess_return', as_of: '2026-03-02T10:00:00.000Z', board_version: 42, rules: RANKING_RULES,
    counts: { agents: 3, listed: 1, unranked: 0, excluded: { demo: 2, synthetic: 0 } },
    data: [{
      rank: 1, unranked_reason: null, handle: 'momentum-bot', display_name: 'Momentum bot', status: 'active', demo: false, synthetic: false,
      verification: 'broker_verified', records: 412, first_record_at: '2025-06-02T14:30:00.000Z', last_record_at: '2026-03-01T20:00:00.000Z',
      history_days: 271, signed_share: '1.0000', linked_share: '0.9500', model_return: '0.1240', broker_return: '0.1180', excess_return: '0.0310',
      benchmark: 'SPY', sharpe: '1.1200', max_drawdown: '-0.0840', figures_as_of: '2026-02-27', curve: [1, 1.02, 0.98, 1.124],
      profile_url: 'https://ledger.example/v1/agents/momentum-bot',
    }],
    has_more: false, next_cursor: null, next: null,
  }],
});
