// The broker wing's one way onto the network: a bounded, retrying JSON request over global fetch.
// It owns timeouts and response size limits (through runtime/bounded-fetch.ts), 429 / 5xx retry
// with Retry-After and backoff, refusing redirects (they would carry credential headers to another
// host), lossless JSON decoding (numbers keep their exact text), and error messages that never echo
// the broker's text (a broker may echo the credential split, reversed or encoded, beyond what
// scrubbing can find). The method is a closed union: the broker clients decide which of them they
// may send (Alpaca: GET only).

import { JsonNumber, readJson, setOwn, type JsonValue } from '../core/json.ts';
import { bodyText, boundedExchange, type ExchangeFailure } from '../runtime/bounded-fetch.ts';

/** What went wrong, in terms the caller can act on. Messages never hold a credential. */
export type BrokerErrorKind =
  | 'auth' //         the broker refused the credentials (401/403)
  | 'rate_limited' // 429 and the retries (or the wait the broker asked for) ran out
  | 'provider' //     unreachable, 5xx, timeout, oversized or malformed answer
  | 'not_found' //    404
  | 'request'; //     any other 4xx: the broker rejected what we asked (a bug on our side)

export type BrokerError = {
  kind: BrokerErrorKind;
  message: string;
  status?: number;
  /** The broker's own error code when it is a number (Alpaca's `code`, SnapTrade's `code`), as text. */
  providerCode?: string;
  /** For rate_limited: how long the broker asked us to wait. */
  retryAfterMs?: number;
};

export type Result<T> = { ok: true; value: T } | { ok: false; error: BrokerError };

export type HttpMethod = 'GET' | 'POST';

export type RetryPolicy = {
  /** total attempts per request, first one included */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** a 429 asking for a longer wait than this is returned as rate_limited instead of slept through */
  maxRetryAfterMs: number;
};

export type HttpPolicy = {
  timeoutMs: number;
  maxResponseBytes: number;
  retry: RetryPolicy;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
};

export const DEFAULT_HTTP_POLICY: HttpPolicy = {
  timeoutMs: 15_000,
  maxResponseBytes: 32 * 1024 * 1024,
  retry: { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 },
  fetch: (input, init) => globalThis.fetch(input, init),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => Date.now(),
};

export function httpPolicy(overrides: Partial<HttpPolicy> = {}): HttpPolicy {
  return { ...DEFAULT_HTTP_POLICY, ...overrides, retry: { ...DEFAULT_HTTP_POLICY.retry, ...overrides.retry } };
}

export type JsonRequest = {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Names the request in messages, e.g. `Alpaca GET /v2/orders`; never holds the query. */
  label: string;
  /** Every credential this request carries, scrubbed from any message built from a response. */
  secrets: string[];
  /** Reads the broker's error code from its error body (each broker has its own shape). */
  errorCode: (body: JsonValue | null) => string | undefined;
  /** Optional: recompute headers per attempt (SnapTrade signs a fresh timestamp each time). */
  prepare?: () => { url: string; headers: Record<string, string> };
};

export type JsonResponse = { status: number; headers: Headers; body: JsonValue };

/**
 * Replaces with `[redacted]` every occurrence of each secret (at least 4 characters long) in any
 * case, and of its encodings a provider may echo: URL-encoded (percent and form), base64 and
 * base64url (at any byte alignment, so also inside an encoded `key:secret` pair) and hex.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  const forms = [...new Set(secrets.filter((s) => s.length >= 4).flatMap(encodedForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return text;
  return text.replace(new RegExp(forms.map(escapeRegExp).join('|'), 'gi'), '[redacted]');
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** The secret and how it reads once encoded; matched case-insensitively, so hex and percent escapes of either case are covered. */
function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), bytes.toString('hex')];
  for (const alphabet of ['base64', 'base64url'] as const) {
    forms.push(bytes.toString(alphabet).replace(/=+$/, ''));
    // Inside a longer encoding the secret starts 0, 1 or 2 bytes into a 3-byte group: keep the
    // characters that depend on the secret's bytes alone.
    for (const shift of [0, 1, 2]) {
      const shifted = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet);
      const whole = Math.floor((shift + bytes.length) / 3) * 4;
      const core = shifted.slice(shift === 0 ? 0 : 4, whole);
      if (core.length >= 8) forms.push(core);
    }
  }
  return forms.filter((f) => f.length >= 4);
}

/** The JSON tree with every number as its exact source text (a string). */
export function numbersAsText(v: JsonValue): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) return v.map(numbersAsText);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) setOwn(out, k, numbersAsText(v[k] as JsonValue));
  return out;
}

const RETRYABLE_STATUS = new Set([425, 429, 500, 502, 503, 504]);

/** Milliseconds to wait before retrying, from Retry-After or X-RateLimit-Reset; null when absent. */
export function retryAfterMs(headers: Headers, nowMs: number): number | null {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null && retryAfter.trim() !== '') {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim()) * 1000;
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null && /^\d+(\.\d+)?$/.test(reset.trim())) {
    const n = Number(reset.trim());
    // Alpaca sends the Unix second the window resets; SnapTrade the seconds remaining.
    return n > 1e9 ? Math.max(0, n * 1000 - nowMs) : n * 1000;
  }
  return null;
}

function backoffMs(attempt: number, retry: RetryPolicy): number {
  const exp = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}

type Attempt =
  | { done: true; result: Result<JsonResponse> }
  | { done: false; error: BrokerError; waitMs: number | null };

/** What a broker's refusal means, in the error's message instead of the broker's own words. */
const KIND_MEANING: Record<BrokerErrorKind, string> = {
  auth: 'the broker refused the credentials',
  rate_limited: 'the broker asked us to slow down',
  provider: 'the broker failed',
  not_found: 'the broker has no such resource',
  request: 'the broker refused the request',
};

/** A broker's error code is kept only when it is a number: free text could carry what it echoed. */
const PROVIDER_CODE = /^[0-9]{1,12}$/;

function kindOf(status: number): BrokerErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status === 425) return 'provider';
  return 'request';
}

/** A failed exchange as an attempt: network trouble is tried again, a refused answer is not. */
function failedExchange(f: ExchangeFailure, req: JsonRequest, policy: HttpPolicy): Attempt {
  const fail = (error: BrokerError): Attempt => ({ done: true, result: { ok: false, error } });
  const retry = (error: BrokerError): Attempt => ({ done: false, error, waitMs: null });
  switch (f.kind) {
    case 'unreachable':
      return retry({ kind: 'provider', message: `${req.label}: broker unreachable` });
    case 'timeout':
      if (f.phase === 'answer') return retry({ kind: 'provider', message: `${req.label}: no answer within ${policy.timeoutMs} ms` });
      return retry({ kind: 'provider', status: f.status, message: `${req.label}: the answer broke off` });
    case 'broken':
      return retry({ kind: 'provider', status: f.status, message: `${req.label}: the answer broke off` });
    case 'redirect':
      return fail({ kind: 'provider', status: f.status, message: `${req.label}: unexpected redirect (HTTP ${f.status}), not followed` });
    case 'too_large':
      return fail({ kind: 'provider', status: f.status, message: `${req.label}: answer larger than ${policy.maxResponseBytes} bytes` });
  }
}

async function attemptOnce(req: JsonRequest, policy: HttpPolicy): Promise<Attempt> {
  const { url, headers } = req.prepare ? req.prepare() : { url: req.url, headers: req.headers };
  const fail = (error: BrokerError): Attempt => ({ done: true, result: { ok: false, error } });
  const exchange = await boundedExchange(url, {
    method: req.method,
    headers,
    ...(req.body !== undefined ? { body: req.body } : {}),
    // Refused: a redirect would carry the credential headers to another host.
    redirect: 'manual',
  }, { timeoutMs: policy.timeoutMs, maxBytes: policy.maxResponseBytes, fetch: policy.fetch });
  if (!exchange.ok) return failedExchange(exchange.error, req, policy);
  const res = exchange.value;
  const text = bodyText(res);
  const parsed = text === '' ? null : readJson(text);
  const body = parsed !== null && parsed.ok ? parsed.value : null;
  if (res.status >= 200 && res.status < 300) {
    if (body === null) return fail({ kind: 'provider', status: res.status, message: `${req.label}: answer is not JSON` });
    return { done: true, result: { ok: true, value: { status: res.status, headers: res.headers, body } } };
  }
  const kind = kindOf(res.status);
  const error: BrokerError = { kind, status: res.status, message: `${req.label} answered HTTP ${res.status} (${KIND_MEANING[kind]})` };
  const code = req.errorCode(body);
  if (code !== undefined && PROVIDER_CODE.test(code)) error.providerCode = scrub(code, req.secrets);
  if (!RETRYABLE_STATUS.has(res.status)) return fail(error);
  const wait = retryAfterMs(res.headers, policy.now());
  if (wait !== null && res.status === 429) error.retryAfterMs = wait;
  return { done: false, error, waitMs: wait };
}

/**
 * Sends one JSON request, retrying 425/429/5xx and network failures up to the policy's attempts
 * (a POST: 429 only). Only the methods the caller may send reach here; the caller owns that rule.
 */
export async function requestJson(req: JsonRequest, policy: HttpPolicy): Promise<Result<JsonResponse>> {
  for (let attempt = 1; ; attempt++) {
    const a = await attemptOnce(req, policy);
    if (a.done) return a.result;
    // A POST (SnapTrade's registerUser, login) may have been carried out even when its answer was
    // lost or a 5xx: only a 429, refused before any work, is safe to send again.
    if (req.method !== 'GET' && a.error.status !== 429) return { ok: false, error: a.error };
    if (a.waitMs !== null && a.waitMs > policy.retry.maxRetryAfterMs) {
      return { ok: false, error: { ...a.error, message: `${a.error.message} (asked to wait ${a.waitMs} ms; not waiting)` } };
    }
    if (attempt >= policy.retry.maxAttempts) {
      return { ok: false, error: { ...a.error, message: `${a.error.message} (gave up after ${attempt} attempts)` } };
    }
    await policy.sleep(a.waitMs ?? backoffMs(attempt, policy.retry));
  }
}
