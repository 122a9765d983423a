// The verifiers' bounds against a server they do not trust (docs/operations.md "Verifying a server
// you do not trust"): the whole run's time, the time without a byte, the bytes of an answer, the
// bytes of one JSON value held in memory (a document read whole, or one NDJSON line) and the depth
// of JSON documents. `boundedFetch` wraps fetch with them and with the redirect rule: redirects are followed
// within the origin given (scheme, host and port), never to another. A bound passed is recorded
// (`breach`) and every later request refused at once, so the run ends unusable (exit 2), with one
// line, even where a caller treats a failed request as a note.
// Pure (fetch and web streams): runs in Node and in a browser.

export type VerifyBounds = {
  /** The whole run: every request and answer together. */
  timeoutMs: number;
  /** An answer's headers, and each of its body's chunks, must come within this. */
  idleMs: number;
  /** The bytes of one answer streamed (an NDJSON export). */
  maxBytes: number;
  /** The bytes of one JSON value held whole: a document, or one line of an NDJSON answer. */
  maxJsonBytes: number;
};

/**
 * How deep a JSON document may nest: twice what the service itself accepts in a request (64), so
 * nothing it publishes comes near it; a fixed rule, not an option.
 */
export const MAX_JSON_NESTING = 128;

export const DEFAULT_BOUNDS: VerifyBounds = {
  timeoutMs: 600_000,
  idleMs: 30_000,
  maxBytes: 4 * 1024 ** 3,
  maxJsonBytes: 64 * 1024 ** 2,
};

/** Same-origin redirects followed in a row before the chain is refused. */
const MAX_REDIRECTS = 5;

/** A bound passed: the run is unusable (exit 2). */
export class BoundExceeded extends Error {}

export type BoundedFetch = {
  fetch: typeof fetch;
  /** The first bound passed, worded for the verdict; null while none was. */
  readonly breach: string | null;
  /** Aborts every request in flight and refuses the later ones, with this reason. */
  stop(reason: string): void;
  /** Ends the run's clock (its deadline no longer fires). */
  close(): void;
};

const MB = 1024 * 1024;
export const showBytes = (n: number) => (n % MB === 0 ? `${n / MB} MiB` : `${n} bytes`);
const seconds = (ms: number) => `${ms / 1000} s`;

/**
 * `streamNdjson`: an answer of type NDJSON to a request that asked for it is read as it comes (up
 * to maxBytes, each line up to maxJsonBytes); otherwise every answer is held whole, so up to maxJsonBytes.
 */
export function boundedFetch(bounds: VerifyBounds, options: { streamNdjson: boolean; fetcher?: typeof fetch }): BoundedFetch {
  const inner = options.fetcher ?? fetch;
  const run = new AbortController();
  let breach: string | null = null;
  const stop = (reason: string) => {
    if (breach !== null) return;
    breach = reason;
    run.abort(new BoundExceeded(reason));
  };
  const deadline = setTimeout(() => stop(`no result within ${seconds(bounds.timeoutMs)} (--timeout)`), bounds.timeoutMs);
  (deadline as { unref?: () => void }).unref?.();

  const bounded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const origin = new URL(url).origin;
    for (let hops = 0; ; hops++) {
      if (breach !== null) throw new BoundExceeded(breach);
      const response = await withIdle(bounds.idleMs, run.signal, stop, url, (signal) => inner(url, { ...init, redirect: 'manual', signal }));
      if (response.status < 300 || response.status > 399 || !response.headers.has('location')) {
        return boundBody(response, url, bounds, options.streamNdjson && asksForNdjson(init), run.signal, stop);
      }
      await response.body?.cancel().catch(() => undefined);
      const next = new URL(response.headers.get('location')!, url);
      if (next.origin !== origin) {
        stop(`${url} redirected to ${next.href}, another origin: a verifier follows redirects only within the origin it was given (verify that URL itself if you mean to)`);
        throw new BoundExceeded(breach!);
      }
      if (hops >= MAX_REDIRECTS) {
        stop(`${url}: more than ${MAX_REDIRECTS} redirects`);
        throw new BoundExceeded(breach!);
      }
      url = next.href;
    }
  };
  return { fetch: bounded as typeof fetch, get breach() { return breach; }, stop, close: () => clearTimeout(deadline) };
}

/**
 * Runs `start` with a signal aborted by the run or by `idleMs` passing first. A timer that fires
 * looks again once the loop has polled for I/O (setImmediate): when the verifier's own work held
 * the thread, the bytes that came meanwhile are read first, and the wait is not the server's.
 */
async function withIdle<T>(idleMs: number, runSignal: AbortSignal, stop: (r: string) => void, url: string, start: (s: AbortSignal) => Promise<T>): Promise<T> {
  const idle = new AbortController();
  let settled = false;
  const timer = setTimeout(() => setImmediate(() => {
    if (settled) return;
    stop(`${url} sent nothing for ${seconds(idleMs)} (--idle-timeout)`);
    idle.abort();
  }), idleMs);
  try {
    return await start(AbortSignal.any([runSignal, idle.signal]));
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/**
 * Only a request that asked for NDJSON (an export, an inputs bundle) reads its answer as a stream;
 * any other answer is held whole, so it gets the whole-answer bound whatever type the server gives it.
 */
function asksForNdjson(init: RequestInit): boolean {
  return (new Headers(init.headers).get('accept') ?? '').includes('ndjson');
}

/** The answer with its body counted as it is read: idle time, bytes, and (NDJSON streamed) line length. */
function boundBody(response: Response, url: string, bounds: VerifyBounds, streamNdjson: boolean, runSignal: AbortSignal, stop: (r: string) => void): Response {
  if (response.body === null) return response;
  const streamed = streamNdjson && (response.headers.get('content-type') ?? '').includes('ndjson');
  const limit = streamed ? bounds.maxBytes : bounds.maxJsonBytes;
  const limitName = streamed ? '--max-bytes' : '--max-json-bytes';
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const over = (what: string) => {
    stop(`${url} ${what}`);
    return new BoundExceeded(`${url} ${what}`);
  };
  if (Number.isFinite(declared) && declared > limit) {
    void response.body.cancel().catch(() => undefined);
    throw over(`declares ${declared} bytes, over ${showBytes(limit)} (${limitName})`);
  }
  const reader = response.body.getReader();
  let total = 0;
  let line = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await withIdle(bounds.idleMs, runSignal, stop, url, (signal) => raceAbort(reader.read(), signal));
        if (next.done) return controller.close();
        const chunk = next.value;
        total += chunk.byteLength;
        if (total > limit) throw over(`sent more than ${showBytes(limit)} (${limitName})`);
        if (streamed) {
          const first = chunk.indexOf(10);
          if (first >= 0 && line + first > bounds.maxJsonBytes) throw over(lineTooLong(bounds));
          line = first < 0 ? line + chunk.byteLength : chunk.byteLength - chunk.lastIndexOf(10) - 1;
          if (line > bounds.maxJsonBytes) throw over(lineTooLong(bounds));
        }
        controller.enqueue(chunk);
      } catch (e) {
        await reader.cancel().catch(() => undefined);
        controller.error(e);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

const lineTooLong = (bounds: VerifyBounds) => `sent a line longer than ${showBytes(bounds.maxJsonBytes)} (--max-json-bytes)`;

/** The read, or the run's abort: a body read does not always end when its request's signal aborts. */
function raceAbort<T>(read: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    read.catch(() => undefined); // the abort errors the stream too: that rejection is this one
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    read.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
