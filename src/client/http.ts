// The client's one way onto the network: a JSON request over `fetch` (Node 20+ or a browser),
// retried when retrying is safe and can help: no answer (connection error, timeout, a body cut
// off), 5xx, 409 `idempotency_request_in_flight`, and 429 after the `Retry-After` it names.
// Any other 4xx is final: the same request would get the same answer. Waits grow exponentially
// with jitter and are bounded; the caller's AbortSignal stops everything at once.
import { LedgerError, LedgerNetworkError, apiError } from './errors.ts';

export type RetryPolicy = {
  /** Requests sent at most, the first included (1 = never retry). */
  maxAttempts: number;
  /** First backoff; doubles per retry up to maxDelayMs, each wait drawn in [d/2, d]. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 or 503 asking for a longer wait than this is returned to the caller instead. */
  maxRetryAfterMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 60_000 };

export type TransportOptions = {
  /** The API base, e.g. `https://ledger.example/v1` (`/v1` is added when missing). */
  baseUrl: string;
  /** An agent API key (`dl_live_...`): needed for writes and the agent's own reads. */
  apiKey?: string | undefined;
  fetch?: typeof fetch | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  /** Per attempt, until the whole body is read. Default 30 s. */
  timeoutMs?: number | undefined;
  /** For tests: how waiting and jitter happen. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
};

export type Query = Record<string, string | number | boolean | undefined | null>;

export type Request = {
  method: 'GET' | 'POST';
  /** Relative to the API base (`/decisions`), or to the site root when `site` is set (`/llms.txt`). */
  path: string;
  site?: boolean;
  query?: Query | undefined;
  /** The JSON body, already serialised: sent as the same bytes on every attempt. */
  body?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** Send the API key (default true when one is configured). */
  auth?: boolean;
  /** 'json' (default) parses the answer; 'text' keeps it as text. */
  as?: 'json' | 'text';
  signal?: AbortSignal | undefined;
};

export type Answer<T> = { status: number; headers: Headers; body: T; attempts: number };

type Attempt =
  | { kind: 'answer'; answer: Answer<unknown> }
  | { kind: 'retry'; error: LedgerError; waitMs: number | null }
  | { kind: 'final'; error: LedgerError };

/** The API base with `/v1` and no trailing slash; the site root is the same without `/v1`. */
export function normaliseBaseUrl(baseUrl: string): { api: string; site: string } {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const api = /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
  return { api, site: api.slice(0, -'/v1'.length) };
}

const sleepFor = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Milliseconds from a Retry-After header (seconds or an HTTP date); undefined when absent. */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

export class Transport {
  readonly api: string;
  readonly site: string;
  readonly retry: RetryPolicy;
  private readonly apiKey: string | undefined;
  private readonly fetcher: typeof fetch;
  private readonly timeoutMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;

  constructor(options: TransportOptions) {
    const { api, site } = normaliseBaseUrl(options.baseUrl);
    this.api = api;
    this.site = site;
    this.apiKey = options.apiKey;
    this.fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.sleep = options.sleep ?? sleepFor;
    this.random = options.random ?? Math.random;
  }

  /** The fetch the client was given, for callers that stream (the verifier). */
  get fetch(): typeof fetch {
    return this.fetcher;
  }

  url(path: string, query?: Query, site = false): string {
    const url = new URL((site ? this.site : this.api) + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** Sends the request, retrying as the header says; the answer of a 2xx, or throws a LedgerError. */
  async send<T>(request: Request): Promise<Answer<T>> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(request, attempt);
      if (outcome.kind === 'answer') return outcome.answer as Answer<T>;
      outcome.error.attempts = attempt;
      if (outcome.kind === 'final' || attempt >= this.retry.maxAttempts) throw outcome.error;
      const wait = outcome.waitMs ?? this.backoffMs(attempt);
      if (wait > this.retry.maxRetryAfterMs) throw outcome.error;
      try {
        await this.sleep(wait, request.signal);
      } catch (e) {
        throw aborted(e, attempt);
      }
    }
  }

  /** Equal jitter: a wait in [d/2, d] with d = base * 2^(attempt-1), capped. */
  backoffMs(attempt: number): number {
    const d = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(d / 2 + this.random() * (d / 2));
  }

  private headers(request: Request): Record<string, string> {
    const h: Record<string, string> = { accept: request.as === 'text' ? 'text/plain, */*' : 'application/json', ...request.headers };
    if (request.body !== undefined) h['content-type'] = 'application/json';
    if ((request.auth ?? true) && this.apiKey) h.authorization = `Bearer ${this.apiKey}`;
    return h;
  }

  private async attempt(request: Request, attempt: number): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await this.fetcher(this.url(request.path, request.query, request.site), {
        method: request.method, headers: this.headers(request), body: request.body, signal,
      });
      text = await res.text();
    } catch (e) {
      if (request.signal?.aborted) return { kind: 'final', error: aborted(e, attempt) };
      const timedOut = timeout.aborted;
      return {
        kind: 'retry',
        waitMs: null,
        error: new LedgerNetworkError({
          code: timedOut ? 'timeout' : 'network_error', type: 'network_error', status: 0,
          message: timedOut
            ? `${request.method} ${request.path}: no complete answer within ${this.timeoutMs} ms`
            : `${request.method} ${request.path}: ${(e as Error).message ?? String(e)}`,
        }, { cause: e }),
      };
    }
    const body = parseBody(text, request.as);
    if (res.status >= 200 && res.status < 300) return { kind: 'answer', answer: { status: res.status, headers: res.headers, body, attempts: attempt } };
    const wait = retryAfterMs(res.headers.get('retry-after'), Date.now());
    const error = apiError(res.status, typeof body === 'string' ? parseBody(body, 'json') : body, res.headers, wait);
    if (!retryable(res.status, error.code)) return { kind: 'final', error };
    return { kind: 'retry', error, waitMs: wait === undefined ? null : wait + Math.round(this.random() * Math.min(1000, wait / 10)) };
  }
}

function parseBody(text: string, as: 'json' | 'text' | undefined): unknown {
  if (as === 'text') return text;
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Statuses whose answer may differ next time; every other 4xx is final. */
function retryable(status: number, code: string): boolean {
  if (status === 429) return true;
  if (status === 409) return code === 'idempotency_request_in_flight';
  return status >= 500 && status !== 501 && status !== 505;
}

function aborted(e: unknown, attempts: number): LedgerNetworkError {
  return new LedgerNetworkError({ code: 'aborted', type: 'network_error', status: 0, message: 'the request was aborted by the caller', attempts }, { cause: e });
}
