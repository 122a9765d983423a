// Shared by the global-log tests: a log key in a temp directory, an integrator on a test app's
// store, and helpers to read the log through the HTTP API.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Integrator } from '../../src/log/integrator.ts';
import { loadLogKey, type LogKey } from '../../src/log/key.ts';
import { parseVkey, type Vkey } from '../../src/core/note.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { LedgerApp } from '../../src/api/app.ts';
import { validDecision } from '../api/record-helpers.ts';
import { postDecision } from '../support/app.ts';

export const TEST_ORIGIN = 'ledger.test/log';

export async function testLogKey(origin = TEST_ORIGIN): Promise<{ key: LogKey; vkey: Vkey; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-logkey-'));
  const loaded = await loadLogKey({ keyFile: null, dataDir: dir, origin });
  if (!loaded.ok) throw new Error(loaded.error);
  const vkey = parseVkey(loaded.value.key.vkey);
  if (!vkey.ok) throw new Error(vkey.error);
  return { key: loaded.value.key, vkey: vkey.value, path: loaded.value.source.path };
}

export function testIntegrator(store: LedgerStore, key: LogKey, opts: Partial<ConstructorParameters<typeof Integrator>[0]> = {}): Integrator {
  return new Integrator({ log: store.log, key, retryMs: 50, ...opts });
}

/** Posts `n` decisions for the agent; returns their ids in order. */
export async function record(t: LedgerApp, secret: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await postDecision(t, secret, validDecision({ symbol: `S${i % 7}` }));
    if (res.statusCode !== 201) throw new Error(`POST /v1/decisions answered ${res.statusCode}: ${res.body}`);
    ids.push(res.json().id as string);
  }
  return ids;
}

export async function getBytes(t: LedgerApp, url: string): Promise<{ status: number; bytes: Uint8Array; headers: Record<string, unknown> }> {
  const res = await t.app.inject({ method: 'GET', url });
  return { status: res.statusCode, bytes: new Uint8Array(res.rawPayload), headers: res.headers };
}
