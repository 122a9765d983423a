// Shared by the performance verification tests: a fetch that tampers with inputs bundles.
import assert from 'node:assert/strict';

/** A fetch whose inputs bundles have the lines `alter` changes rewritten. */
export function altering(alter: (line: Record<string, unknown>) => boolean): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!String(input).includes('/performance/inputs')) return res;
    let done = false;
    const lines = (await res.text()).split('\n').map((text) => {
      if (text === '') return text;
      const value = JSON.parse(text) as Record<string, unknown>;
      if (!alter(value)) return text;
      done = true;
      return JSON.stringify(value);
    });
    assert.ok(done, 'the alteration found its line');
    return new Response(lines.join('\n'), { status: res.status, headers: res.headers });
  };
}

/** A fetch whose inputs bundles have their lines (parsed, the end line last) rewritten by `rewrite`. */
export function rewriting(rewrite: (lines: Array<Record<string, unknown>>) => Array<Record<string, unknown>>): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!String(input).includes('/performance/inputs')) return res;
    const lines = (await res.text()).split('\n').filter((t) => t !== '').map((t) => JSON.parse(t) as Record<string, unknown>);
    const out = rewrite(lines);
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    return new Response(out.map((l) => JSON.stringify(l)).join('\n') + '\n', { status: res.status, headers });
  };
}

/** A fetch whose chain pages have the records `alter` changes rewritten. */
export function alteringChain(alter: (record: { entry: Record<string, unknown>; content?: string }) => boolean): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!new URL(String(input)).pathname.endsWith('/chain')) return res;
    const page = (await res.json()) as { records: Array<{ entry: Record<string, unknown>; content?: string }> };
    let done = false;
    for (const r of page.records) if (!done && alter(r)) done = true;
    assert.ok(done, 'the alteration found its record');
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    return new Response(JSON.stringify(page), { status: res.status, headers });
  };
}

/**
 * A fetch that answers `victim`'s performance report and inputs with those of `source`, their
 * `agent` fields renamed to `victim` (a consistent lie: only the records can tell).
 */
export function impersonating(source: string, victim: string): typeof fetch {
  return async (input, init) => {
    const url = String(input);
    if (!url.includes(`/agents/${victim}/performance`)) return fetch(input, init);
    const res = await fetch(url.replace(`/agents/${victim}/performance`, `/agents/${source}/performance`), init);
    const text = (await res.text()).split(`"agent":"${source}"`).join(`"agent":"${victim}"`);
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    return new Response(text, { status: res.status, headers });
  };
}
