// A real ledger service listening on a loopback port, on a given store, for the client and tool
// server tests; and a fetch wrapper that injects failures around the real one.
import { testApp, type TestApp } from '../support/app.ts';
import type { StoreKind } from '../support/stores.ts';

export type Served = TestApp & { baseUrl: string };

export async function serve(kind: StoreKind, env: Record<string, string> = {}): Promise<Served> {
  const store = await kind.open();
  const t = await testApp(store, { env });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...t, baseUrl: `${address}/v1` };
}

export type Call = { method: string; url: string; headers: Record<string, string>; body: string | undefined };

/**
 * A fetch that forwards to the real one and records every call; `fault(call, n)` may replace an
 * answer: return 'drop-after' to let the server answer and then throw as if the connection broke,
 * a Response to answer instead of the server (the request never reaches it), or
 * { after: Response } to forward the request and then answer that instead of the server's answer.
 */
export function faultyFetch(fault: (call: Call, n: number) => 'drop-after' | Response | { after: Response } | undefined) {
  const calls: Call[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const call: Call = { method: init?.method ?? 'GET', url: String(input), headers, body: init?.body as string | undefined };
    calls.push(call);
    const action = fault(call, calls.length);
    if (action instanceof Response) return action;
    const res = await fetch(input, init);
    if (action === 'drop-after') {
      await res.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset (injected)');
    }
    if (action && 'after' in action) {
      await res.arrayBuffer();
      return action.after;
    }
    return res;
  };
  return { fetch: fetcher, calls };
}

export function errorResponse(status: number, code: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { type: 'api_error', code, message: `injected ${code}`, request_id: 'req_injected' } }), {
    status, headers: { 'content-type': 'application/json', ...headers },
  });
}

export const DECISION = { symbol: 'AAPL', action: 'BUY', quantity: '10', confidence: 0.72, thesis: 'Services margin expanding.' } as const;
