// The service's errors as values: each is one row of the interface's error table (section 7),
// with its HTTP status, a stable code and, where one field is at fault, `param`. Every error the
// service sends is built here (by the use cases, the wings and the HTTP edge alike), so this is
// the catalogue the README's error table is checked against.
export type ErrorType =
  | 'authentication_error'
  | 'permission_error'
  | 'invalid_request_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export type LedgerError = {
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param?: string;
};

const make = (status: number, type: ErrorType, code: string) =>
  (message: string, param?: string): LedgerError => (param === undefined ? { status, type, code, message } : { status, type, code, message, param });

export const errors = {
  missingApiKey: make(401, 'authentication_error', 'missing_api_key'),
  invalidApiKey: make(401, 'authentication_error', 'invalid_api_key'),
  insufficientScope: make(403, 'permission_error', 'insufficient_scope'),
  agentNotActive: make(403, 'permission_error', 'agent_not_active'),
  handleTaken: make(409, 'invalid_request_error', 'handle_taken'),
  agentRetired: make(409, 'invalid_request_error', 'agent_retired'),
  invalidRequest: make(400, 'invalid_request_error', 'invalid_request'),
  missingIdempotencyKey: make(400, 'invalid_request_error', 'missing_idempotency_key'),
  idempotencyKeyReused: make(409, 'idempotency_error', 'idempotency_key_reused'),
  idempotencyInFlight: make(409, 'idempotency_error', 'idempotency_request_in_flight'),
  rateLimitExceeded: make(429, 'rate_limit_error', 'rate_limit_exceeded'),
  notFound: make(404, 'invalid_request_error', 'not_found'),
  recordIsImmutable: make(409, 'invalid_request_error', 'record_is_immutable'),
  unsupportedMediaType: make(415, 'invalid_request_error', 'unsupported_media_type'),
  requestTooLarge: make(413, 'invalid_request_error', 'request_too_large'),
  headersTooLarge: make(431, 'invalid_request_error', 'request_too_large'),
  serviceUnavailable: make(503, 'api_error', 'service_unavailable'),
  providerError: make(502, 'api_error', 'provider_error'),
  internalError: make(500, 'api_error', 'internal_error'),
};

export type Result<T> = { ok: true; value: T } | { ok: false; error: LedgerError };
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(error: LedgerError): Result<T> => ({ ok: false, error });
