// Bounded HTTP for the clients of the public timestamping services (OpenTimestamps calendars, and
// the block header sources the anchoring job and the offline verifier read). It owns their defaults
// (deadline, body cap, User-Agent; redirects refused) and their words for a failed exchange
// (bounded-fetch.ts does the exchange).
// This folder imports nothing of the project, and anything may import it.
import { boundedExchange, type ExchangeFailure } from './bounded-fetch.ts';

export type FetchLike = typeof fetch;

export type HttpOptions = {
  /** whole request, body included; default 10 s */
  timeoutMs?: number;
  /** bodies longer than this are refused unread; default 10,000 bytes (the reference client's limit) */
  maxBytes?: number;
  userAgent?: string;
  /** defaults to the global fetch */
  fetch?: FetchLike;
};

export type HttpFailure = { kind: 'unreachable' | 'timeout' | 'too_large'; message: string };
export type HttpAnswer = { status: number; body: Uint8Array };

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 10_000;
export const USER_AGENT = 'decision-ledger-anchor';

export async function boundedFetch(
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: Uint8Array },
  options: HttpOptions = {},
): Promise<{ ok: true; value: HttpAnswer } | { ok: false; error: HttpFailure }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const answer = await boundedExchange(url, {
    method: init.method,
    headers: { 'User-Agent': options.userAgent ?? USER_AGENT, ...init.headers },
    body: init.body ? Buffer.from(init.body) : undefined,
    redirect: 'error',
  }, { timeoutMs, maxBytes, fetch: options.fetch ?? fetch });
  if (answer.ok) return { ok: true, value: { status: answer.value.status, body: answer.value.body } };
  return { ok: false, error: httpFailure(answer.error, timeoutMs, maxBytes) };
}

function httpFailure(failure: ExchangeFailure, timeoutMs: number, maxBytes: number): HttpFailure {
  switch (failure.kind) {
    case 'timeout':
      return { kind: 'timeout', message: `no complete answer within ${timeoutMs} ms` };
    case 'too_large':
      return {
        kind: 'too_large',
        message: failure.declared === null ? `answer exceeds the ${maxBytes}-byte limit` : `answer of ${failure.declared} bytes exceeds the ${maxBytes}-byte limit`,
      };
    case 'redirect':
      return { kind: 'unreachable', message: `unexpected redirect (HTTP ${failure.status})` };
    default:
      return { kind: 'unreachable', message: describe(failure.error) };
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
  }
  return String(e);
}

/** A base URL without trailing slashes, so paths join as `${base}/digest`. */
export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}
