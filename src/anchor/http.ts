// Bounded HTTP for the anchor wing's clients (calendars, block header sources). Owns: one request
// with a deadline (AbortSignal) and a cap on the body read, returning failures as values.

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
  const signal = AbortSignal.timeout(timeoutMs);
  const doFetch = options.fetch ?? fetch;
  try {
    const response = await doFetch(url, {
      method: init.method,
      headers: { 'User-Agent': options.userAgent ?? USER_AGENT, ...init.headers },
      body: init.body ? Buffer.from(init.body) : undefined,
      signal,
      redirect: 'error',
    });
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => {});
      return { ok: false, error: { kind: 'too_large', message: `answer of ${declared} bytes exceeds the ${maxBytes}-byte limit` } };
    }
    const body = await readCapped(response, maxBytes);
    if (!body) return { ok: false, error: { kind: 'too_large', message: `answer exceeds the ${maxBytes}-byte limit` } };
    return { ok: true, value: { status: response.status, body } };
  } catch (e) {
    if (signal.aborted) return { ok: false, error: { kind: 'timeout', message: `no complete answer within ${timeoutMs} ms` } };
    return { ok: false, error: { kind: 'unreachable', message: describe(e) } };
  }
}

/** Reads the body up to `maxBytes`; null (and the stream cancelled) past that. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
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
