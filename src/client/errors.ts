// The client's errors: every failure is a LedgerError carrying what the interface's error body
// (section 2.7) says, so a caller branches on `code`, never on a message.
//  - LedgerApiError: the service answered with an error (its code, type, param, request_id, status);
//  - LedgerNetworkError: no answer (connection refused or reset, timeout), after the retries;
//  - LedgerValidationError: refused locally, before sending, by the same checks the service runs
//    (the shared core), with the `param` the service would have named.
import { isObject } from '../core/json.ts';


export type LedgerErrorFields = {
  /** The spec's stable code (section 7), e.g. `invalid_request`, `rate_limit_exceeded`. */
  code: string;
  /** The spec's error category, e.g. `invalid_request_error`. */
  type: string;
  message: string;
  /** The offending field or header, when one is at fault. */
  param?: string | undefined;
  /** The service's id of the request, to quote for help. */
  requestId?: string | undefined;
  /** HTTP status; 0 when the service never answered or the request was refused locally. */
  status: number;
  docUrl?: string | undefined;
  /** On 429 (and 503): how long the service asked to wait. */
  retryAfterMs?: number | undefined;
  /** recordDecision: the Idempotency-Key it used, so a later retry can reuse it. */
  idempotencyKey?: string | undefined;
  /** How many requests were sent before giving up. */
  attempts?: number | undefined;
};

export class LedgerError extends Error implements LedgerErrorFields {
  readonly code: string;
  readonly type: string;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly status: number;
  readonly docUrl: string | undefined;
  readonly retryAfterMs: number | undefined;
  idempotencyKey: string | undefined;
  attempts: number | undefined;

  constructor(fields: LedgerErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options);
    this.name = new.target.name;
    this.code = fields.code;
    this.type = fields.type;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.status = fields.status;
    this.docUrl = fields.docUrl;
    this.retryAfterMs = fields.retryAfterMs;
    this.idempotencyKey = fields.idempotencyKey;
    this.attempts = fields.attempts;
  }

  /** The error as the interface's body shape, plus status: what a tool or a log line shows. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { type: this.type, code: this.code, message: this.message, status: this.status };
    if (this.param !== undefined) out.param = this.param;
    if (this.requestId !== undefined) out.request_id = this.requestId;
    if (this.docUrl !== undefined) out.doc_url = this.docUrl;
    if (this.retryAfterMs !== undefined) out.retry_after_ms = this.retryAfterMs;
    if (this.idempotencyKey !== undefined) out.idempotency_key = this.idempotencyKey;
    return out;
  }
}

/** The service answered with an error status. */
export class LedgerApiError extends LedgerError {}

/** The service never answered: the connection failed or timed out, on every attempt. */
export class LedgerNetworkError extends LedgerError {}

/** Refused before sending, by the checks the service would run. */
export class LedgerValidationError extends LedgerError {}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The error a non-2xx answer stands for: the body's `error` when it has the interface's shape,
 * otherwise (a proxy's HTML page, an empty body) `unexpected_response` with the status.
 */
export function apiError(status: number, body: unknown, headers: { get(name: string): string | null }, retryAfterMs: number | undefined): LedgerApiError {
  const e = isObject(body) && isObject(body.error) ? body.error : null;
  const requestId = text(e?.request_id) ?? headers.get('request-id') ?? undefined;
  if (e && typeof e.code === 'string' && typeof e.message === 'string') {
    return new LedgerApiError({
      code: e.code, type: text(e.type) ?? 'api_error', message: e.message, param: text(e.param), requestId,
      docUrl: text(e.doc_url), status, retryAfterMs,
    });
  }
  return new LedgerApiError({
    code: 'unexpected_response', type: 'api_error', status, requestId, retryAfterMs,
    message: `the service answered ${status} without an error body`,
  });
}
