// A real service with broker connections for the wiring tests: the app on a real store, its log
// lines captured (to scan them for credentials), a clock the test moves, and the Alpaca simulator.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loggerOptions } from '../../src/api/logging.ts';
import { loadConfig } from '../../src/config.ts';
import type { Clock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import type { Scope } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { StoredRecord } from '../../src/domain/types.ts';
import { uniqueHandle, idempotencyKey } from '../support/app.ts';

export class TestClock implements Clock {
  constructor(public ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
}

export type BrokerTestApp = LedgerApp & {
  store: LedgerStore;
  clock: TestClock;
  operators: Operators;
  logs: string[];
  agent: (opts?: { scopes?: Scope[] }) => Promise<{ handle: string; secret: string; agentId: string }>;
  decide: (secret: string, body: Record<string, unknown>) => Promise<{ id: string; link_token: string; recorded_at: string }>;
};

export const MASTER_KEY = randomBytes(32).toString('base64');

export async function brokerTestApp(store: LedgerStore, env: Record<string, string>, startIso = '2026-03-13T13:00:00.000Z'): Promise<BrokerTestApp> {
  const logs: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done(); } });
  const config = loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:', LEDGER_MASTER_KEY: MASTER_KEY, LEDGER_SYNC_INTERVAL_S: '0', ...env });
  const clock = new TestClock(Date.parse(startIso));
  const ledger = await buildApp(compose({ store, config, clock, checkSignature: signatureChecker(store) }), { logger: { ...loggerOptions('trace'), stream } });
  const operators = new Operators(store, clock);
  const agent: BrokerTestApp['agent'] = async (o = {}) => {
    const handle = uniqueHandle('brk');
    const created = await operators.createAgent({ handle, demo: false, scopes: o.scopes });
    if (!created.ok) throw new Error(created.error.message);
    return { handle, secret: created.value.apiKey.secret, agentId: created.value.agent.id };
  };
  const decide: BrokerTestApp['decide'] = async (secret, body) => {
    const res = await ledger.app.inject({
      method: 'POST', url: '/v1/decisions', payload: JSON.stringify(body),
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey() },
    });
    if (res.statusCode !== 201) throw new Error(res.body);
    return res.json();
  };
  return { ...ledger, store, clock, operators, logs, agent, decide };
}

/** Every execution record of an agent, newest first. */
export async function executions(store: LedgerStore, agentId: string): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  for (let before: string | undefined; ;) {
    const page = await store.listAgentRecords(agentId, 'execution', { limit: 500, before });
    out.push(...page);
    if (page.length < 500) return out;
    before = page[page.length - 1]!.id;
  }
}

/** Connects the simulator's first Alpaca account through the API; answers the connection id. */
export async function connectAlpaca(t: BrokerTestApp, secret: string, sim: { scenario: { keys: { keyId: string; secretKey: string }[] } }): Promise<string> {
  const k = sim.scenario.keys[0]!;
  const res = await t.app.inject({
    method: 'POST', url: '/v1/brokers/alpaca', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key_id: k.keyId, api_secret: k.secretKey, environment: 'paper' }),
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}
