// Request and response schemas, declared once: they validate requests, type the handlers and
// generate /v1/openapi.json.
import { Type, type TSchema } from '@sinclair/typebox';
import { DECIMAL_PATTERN } from '../core/decimal.ts';
import { ASSET_CLASSES, DECISION_ACTIONS } from '../core/decision.ts';
import { errors } from '../domain/errors.ts';
import { RECORD_ID_PATTERN } from '../ledger/ids.ts';
import { HANDLE_PATTERN } from '../domain/handle.ts';
import { ALL_SCOPES, AGENT_STATUSES } from '../domain/types.ts';

export { RECORD_ID_PATTERN };

export const stringEnum = <T extends string>(values: readonly T[], options: object = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/** Refuses U+0000..U+001F and U+007F: never part of an instrument or an identifier. */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F]*$';

export const RecordId = (description = 'A record id.') => Type.String({ pattern: RECORD_ID_PATTERN, description });

export const Decimal = (description: string) =>
  Type.Union([Type.String({ pattern: DECIMAL_PATTERN }), Type.Number()], {
    description: `${description} A Decimal: a JSON number or a string in JSON number grammar; hashed as its normalised decimal string.`,
  });


/** The decision fields of interface 2.2 (without `signature`), shared with the assertion request. */
export const decisionFields = {
  symbol: Type.String({ minLength: 1, maxLength: 20, pattern: NO_CONTROL_CHARACTERS, description: 'The instrument, e.g. AAPL or BTC/USD (no control characters).' }),
  action: stringEnum(DECISION_ACTIONS),
  asset_class: Type.Optional(stringEnum(ASSET_CLASSES, { default: 'US_EQUITY' })),
  target_allocation_pct: Type.Optional(Decimal('Share of the whole portfolio, 0 to 100.')),
  quantity: Type.Optional(Decimal('Quantity.')),
  notional: Type.Optional(Decimal('Notional amount.')),
  currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3, pattern: NO_CONTROL_CHARACTERS, default: 'USD', description: 'A three-letter currency code (no control characters).' })),
  confidence: Type.Optional(Decimal('Confidence, 0 to 1.')),
  time_horizon: Type.Optional(Type.String({ maxLength: 120, pattern: NO_CONTROL_CHARACTERS, description: 'How long the decision is meant to hold, e.g. "5 td" or "3 months" (no control characters).' })),
  thesis: Type.Optional(Type.String({ maxLength: 8000, description: 'The reasoning.' })),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Free-form; every number in it is hashed as a normalised decimal string.' })),
  occurred_at: Type.Optional(Type.String({ format: 'date-time', description: 'When the agent decided: RFC 3339 with an offset, not in the future, at most seven days old. Information only.' })),
};

export const SignatureObject = Type.Object({
  key_id: Type.String({ pattern: '^aid_[0-9A-Za-z]{1,64}$', description: 'A registered public key id.' }),
  nonce: Type.String({ minLength: 1, maxLength: 255, description: 'The nonce sent to the assertion endpoint; a nonce signs once.' }),
  signature: Type.String({ minLength: 1, maxLength: 128, description: 'Ed25519 signature over the assertion payload (UTF-8), base64url without padding.' }),
}, { additionalProperties: false });

export const DecisionRequest = Type.Object({ ...decisionFields, signature: Type.Optional(SignatureObject) }, { additionalProperties: false });

export const Verification = Type.Object({
  algorithm: Type.Literal('sha256'),
  canonicalisation: Type.Literal('canon_v1'),
  content_hash: Type.String(),
  chain_hash: Type.String(),
  chain_seq: Type.Integer(),
  agent_signed: Type.Boolean(),
});

export const DecisionResponse = Type.Object({
  id: Type.String({ description: 'dec_ followed by a ULID.' }),
  object: Type.Literal('decision'),
  immutable: Type.Literal(true),
  recorded_at: Type.String({ format: 'date-time' }),
  provenance: Type.Literal('SERVICE_RECORDED'),
  verification: Verification,
  link_token: Type.String({ description: "Stamp into the broker order's client_order_id." }),
  proof_url: Type.String({ format: 'uri' }),
});

export const DecisionListItem = Type.Composite([DecisionResponse, Type.Object({
  content: Type.Object({}, { additionalProperties: true, description: 'The canon_v1 content document as recorded.' }),
})]);

export const DecisionList = Type.Object({
  object: Type.Literal('list'),
  url: Type.String(),
  data: Type.Array(DecisionListItem),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor to get the next (older) page; null on the last page.' }),
});

/** Every code the service answers with and its status, from the ledger's error set (interface section 7). */
export const ERROR_CODES = Object.values(errors).map((make) => make('')).map((e) => `${e.code} (${e.status})`);

export const ErrorBody = Type.Object({
  error: Type.Object({
    type: Type.String(),
    code: Type.String({ description: `Stable, safe to branch on: ${ERROR_CODES.join(', ')}. provider_error (502): a broker or market-data provider failed or has no price for what was asked; nothing was recorded.` }),
    message: Type.String(),
    param: Type.Optional(Type.String()),
    doc_url: Type.Optional(Type.String({ format: 'uri' })),
    request_id: Type.String(),
  }),
}, { $id: 'ErrorBody', description: 'Every error has this body.' });

/** Error responses to declare for a route, by status. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody')]));
}

export const Handle = Type.String({ pattern: HANDLE_PATTERN });

export const AgentView = Type.Object({
  object: Type.Literal('agent'),
  id: Type.String(),
  handle: Type.String(),
  display_name: Type.Union([Type.String(), Type.Null()]),
  status: stringEnum(AGENT_STATUSES),
  demo: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});

export const ApiKeyView = Type.Object({
  object: Type.Literal('api_key'),
  id: Type.String(),
  agent: Type.String({ description: 'The agent handle.' }),
  prefix: Type.String({ description: 'The first characters of the secret, to tell keys apart.' }),
  scopes: Type.Array(stringEnum(ALL_SCOPES)),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  secret: Type.Optional(Type.String({ description: 'Shown once, in the response that creates the key.' })),
});

export const Scopes = Type.Array(stringEnum(ALL_SCOPES), { minItems: 1, uniqueItems: true });
