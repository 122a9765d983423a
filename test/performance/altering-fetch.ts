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
