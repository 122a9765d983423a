// A real service on a real store for tests: the fastify app (in-process via inject, or
// listening on a loopback port), plus helpers to create agents and post decisions.
import { after } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Clock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import type { Ed25519Verifier } from '../../src/ledger/verifier-thread.ts';
import { systemClock } from '../../src/domain/clock.ts';
import type { Scope } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { StoreKind } from './stores.ts';
import type { WitnessPolicy } from '../../src/core/witness-policy.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export type TestApp = LedgerApp & {
  store: LedgerStore;
  config: Config;
  operators: Operators;
  /** Creates an active agent and returns its handle and API key secret. */
  agent: (handle?: string, opts?: { scopes?: Scope[]; demo?: boolean }) => Promise<{ handle: string; secret: string; keyId: string; agentId: string }>;
};

let counter = 0;
export const uniqueHandle = (prefix = 'agent') => `${prefix}-${process.pid}-${++counter}`.slice(0, 32);

/** `verify`: how signatures are checked (default: on the calling thread). */
export async function testApp(store: LedgerStore, opts: { env?: Record<string, string>; clock?: Clock; verify?: Ed25519Verifier; witnessPolicy?: WitnessPolicy; logVkey?: string } = {}): Promise<TestApp> {
  const config = loadConfig({ LEDGER_ADMIN_TOKEN: ADMIN_TOKEN, LEDGER_DATABASE_URL: 'sqlite::memory:', ...opts.env });
  const clock = opts.clock ?? systemClock;
  const ledger = await buildApp(compose({
    store, config, clock, checkSignature: signatureChecker(store, opts.verify),
    ...(opts.witnessPolicy ? { witnessPolicy: opts.witnessPolicy } : {}), ...(opts.logVkey ? { logVkey: opts.logVkey } : {}),
  }));
  const operators = new Operators(store, clock);
  const agent: TestApp['agent'] = async (handle = uniqueHandle(), o = {}) => {
    const created = await operators.createAgent({ handle, demo: o.demo ?? false, scopes: o.scopes });
    if (!created.ok) throw new Error(created.error.message);
    return { handle, secret: created.value.apiKey.secret, keyId: created.value.apiKey.id, agentId: created.value.agent.id };
  };
  return { ...ledger, store, config, operators, agent };
}

/** testApp() whose app and store are closed when the current test file ends. */
export async function testAppClosedAfter(store: LedgerStore, opts: Parameters<typeof testApp>[1] = {}): Promise<TestApp> {
  const t = await testApp(store, opts);
  after(async () => {
    await t.close();
    await store.close();
  });
  return t;
}

/** Closes a suite's app, its store, and drops the store's fresh database. */
export async function closeTestApp(t: TestApp | undefined, kind: StoreKind): Promise<void> {
  await t?.close();
  await t?.store.close();
  await kind.cleanup();
}

let idem = 0;
export const idempotencyKey = () => `idem-${process.pid}-${Date.now()}-${++idem}`;

/** POST /v1/decisions through inject. */
export function postDecision(t: LedgerApp, secret: string, body: unknown, key: string | null = idempotencyKey(), extraHeaders: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/decisions',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/json',
      ...(key === null ? {} : { 'idempotency-key': key }),
      ...extraHeaders,
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
