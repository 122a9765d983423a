// One bounded HTTP exchange for the clients of outside APIs (anchor calendars and header sources,
// brokers, market data): a deadline on the whole exchange, body included, and a cap on the bytes
// of the answer read. It answers what went wrong as a value, not as a message: each wing words
// its own errors (and decides what is retried) at its edge.
// This folder imports nothing of the project, and anything may import it.

export type ExchangeLimits = {
  /** The whole exchange: the answer's status and all of its body. */
  timeoutMs: number;
  /** Bodies longer than this are refused: unread when their length is declared, else cut off. */
  maxBytes: number;
  fetch: typeof fetch;
};

/** `redirect` is the caller's rule; with 'manual' a 3xx answer is refused unread (kind `redirect`). */
export type ExchangeRequest = Omit<RequestInit, 'signal'> & { redirect?: 'error' | 'manual' | 'follow' };

export type Answer = { status: number; headers: Headers; body: Uint8Array };

export type ExchangeFailure =
  /** No answer: the request failed, not by the deadline. */
  | { kind: 'unreachable'; error: unknown }
  /** The deadline passed before the answer (`phase: 'answer'`) or before its whole body. */
  | { kind: 'timeout'; phase: 'answer' | 'body'; status?: number }
  /** The body broke off while read, not by the deadline. */
  | { kind: 'broken'; status: number; error: unknown }
  /** The body is over the limit; `declared` when its Content-Length said so. */
  | { kind: 'too_large'; status: number; declared: number | null }
  | { kind: 'redirect'; status: number };

export type Exchange = { ok: true; value: Answer } | { ok: false; error: ExchangeFailure };

export async function boundedExchange(url: string, request: ExchangeRequest, limits: ExchangeLimits): Promise<Exchange> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await limits.fetch(url, { ...request, signal });
  } catch (error) {
    return { ok: false, error: signal.aborted || isAbort(error) ? { kind: 'timeout', phase: 'answer' } : { kind: 'unreachable', error } };
  }
  const { status, headers } = response;
  if (request.redirect === 'manual' && status >= 300 && status < 400) {
    await cancel(response);
    return { ok: false, error: { kind: 'redirect', status } };
  }
  const declared = Number(headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await cancel(response);
    return { ok: false, error: { kind: 'too_large', status, declared } };
  }
  try {
    const body = await readCapped(response, limits.maxBytes);
    if (!body) return { ok: false, error: { kind: 'too_large', status, declared: null } };
    return { ok: true, value: { status, headers, body } };
  } catch (error) {
    return { ok: false, error: signal.aborted ? { kind: 'timeout', phase: 'body', status } : { kind: 'broken', status, error } };
  }
}

/** A fetch rejected by its own abort signal (a stand-in fetch may reject so before the deadline). */
function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

async function cancel(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
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
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  chunks.reduce((at, c) => (out.set(c, at), at + c.byteLength), 0);
  return out;
}

/** The body as UTF-8 text, a malformed sequence as U+FFFD (a byte-order mark is kept). */
export function bodyText(answer: Answer): string {
  return Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength).toString('utf8');
}
