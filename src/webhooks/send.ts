// One delivery attempt over HTTP: a POST of the signed body to the receiver, connecting to the
// address the guard checked (address.ts), with a bounded time for the whole exchange and a
// bounded answer (read up to a limit, then the connection is dropped). Redirects are not
// followed: a 3xx is a failed attempt. Only a 2xx answer counts as delivered.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkHost, bareHost, type Resolve, systemResolve } from './address.ts';

export type SendLimits = {
  /** The whole attempt: connecting, sending, the answer's status and body. */
  timeoutMs: number;
  /** Bytes of the answer's body read at most; the rest is not read. */
  maxResponseBytes: number;
  allowPrivate: boolean;
  resolve?: Resolve;
  /**
   * Keep-alive agents, so one endpoint's deliveries share a connection. A pooled connection stays
   * on the address checked when it was opened, and every request is checked again first.
   */
  agents?: { http: http.Agent; https: https.Agent };
};

/** Keep-alive agents for `SendLimits.agents`; destroy them when done. */
export function keepAliveAgents(): { http: http.Agent; https: https.Agent; destroy: () => void } {
  const options = { keepAlive: true, maxSockets: 4, maxFreeSockets: 64, timeout: 30_000 };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return { ...agents, destroy: () => { agents.http.destroy(); agents.https.destroy(); } };
}

const TIMED_OUT = 'timed out';

export type SendResult = { delivered: boolean; statusCode: number | null; error: string | null; durationMs: number };

/** The error text kept in the delivery log: short, one line. */
const brief = (s: string) => s.replace(/\s+/g, ' ').slice(0, 300);

/** A lookup that answers only the address already checked, whatever the resolver would say now. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

export async function send(target: string, body: string, headers: Record<string, string>, limits: SendLimits, signal?: AbortSignal): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(target);
  const checked = await withTimeout(checkHost(url.hostname, limits.allowPrivate, limits.resolve ?? systemResolve), limits.timeoutMs);
  if (checked === null) return { delivered: false, statusCode: null, error: `resolving ${bareHost(url.hostname)} timed out`, durationMs: elapsed() };
  if (!checked.ok) return { delivered: false, statusCode: null, error: `refused: ${checked.reason}`, durationMs: elapsed() };
  const remaining = Math.max(1, limits.timeoutMs - elapsed());
  const answer = await post(url, body, headers, { ...limits, timeoutMs: remaining }, pinnedLookup(checked.address, checked.family), signal);
  if (answer.error === TIMED_OUT) return { ...answer, error: `timed out after ${limits.timeoutMs} ms`, durationMs: elapsed() };
  return { ...answer, durationMs: elapsed() };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(null), ms);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}

function post(url: URL, body: string, headers: Record<string, string>, limits: SendLimits, lookup: LookupFunction, signal?: AbortSignal): Promise<Omit<SendResult, 'durationMs'>> {
  return new Promise((resolve) => {
    let settled = false;
    /** `reuse`: the answer was read to its end, so its connection may serve the next delivery. */
    const finish = (r: Omit<SendResult, 'durationMs'>, reuse = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (!reuse) req.destroy();
      resolve(r);
    };
    const client = url.protocol === 'https:' ? https : http;
    const payload = Buffer.from(body, 'utf8');
    const req = client.request(url, {
      method: 'POST',
      lookup,
      agent: (url.protocol === 'https:' ? limits.agents?.https : limits.agents?.http) ?? false,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'decision-ledger-webhooks/1' },
    });
    const timer = setTimeout(() => finish({ delivered: false, statusCode: null, error: TIMED_OUT }), limits.timeoutMs);
    const onAbort = () => finish({ delivered: false, statusCode: null, error: 'aborted: the service is stopping' });
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) => finish({ delivered: false, statusCode: null, error: brief(`${err.code ?? 'error'}: ${err.message}`) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const delivered = status >= 200 && status < 300;
      const error = delivered ? null : `the receiver answered ${status}`;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // The answer's body is never used: past the limit the connection is simply dropped.
        if (read > limits.maxResponseBytes) finish({ delivered, statusCode: status, error });
      });
      res.on('end', () => finish({ delivered, statusCode: status, error }, true));
      res.on('error', () => finish({ delivered, statusCode: status, error }));
    });
    if (signal?.aborted) onAbort();
    else req.end(payload);
  });
}
