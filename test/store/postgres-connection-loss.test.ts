// Issue 16, finding 1: PostgreSQL connections dropped while clients write (pg_terminate_backend on
// the service's backends) must not crash the process. The requests that were on those connections
// fail with the spec's error body, nothing is half-recorded, and the pool reconnects.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { dropPostgresSchema, freshPostgresUrl, POSTGRES_URL, skipUnless } from '../support/services.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies, validDecision } from '../api/record-helpers.ts';

const skip = await skipUnless('postgres');

describe('PostgreSQL connections terminated under load', { skip }, () => {
  const application = `ledger-conn-loss-${process.pid}`;
  let url: string;
  let store: LedgerStore;
  let t: TestApp;

  before(async () => {
    url = `${freshPostgresUrl()}&application_name=${application}`;
    store = openStore(url);
    await store.migrate();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await dropPostgresSchema(url);
  });

  /** Terminates every backend of this test's pool (and only this test's: the name is unique). */
  async function terminateOurBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE application_name = $1', [application]);
      return rows.filter((r) => r.gone).length;
    } finally {
      await admin.end();
    }
  }

  test('writes in flight fail with the error body, the process lives, the pool reconnects, the chain verifies', async () => {
    const agent = await t.agent();
    const statuses: number[] = [];
    const acknowledged: string[] = [];
    const bodies: { error?: { code?: string; request_id?: string } }[] = [];
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const res = await postDecision(t, agent.secret, validDecision(), idempotencyKey());
        statuses.push(res.statusCode);
        if (res.statusCode === 201) acknowledged.push(res.json().id);
        else bodies.push(res.json());
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    let terminated = 0;
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      terminated += await terminateOurBackends();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop = true;
    await Promise.all(writers);

    assert.ok(terminated > 0, 'some backends were terminated');
    assert.ok(statuses.every((s) => s === 201 || s >= 500), `only 201 or 5xx: ${[...new Set(statuses)]}`);
    for (const body of bodies) {
      assert.ok(body.error?.code && body.error.request_id, `a failed write answers the spec's error body: ${JSON.stringify(body)}`);
    }
    // The pool reconnects: the next write is recorded.
    const after = await postDecision(t, agent.secret, validDecision(), idempotencyKey());
    assert.equal(after.statusCode, 201, after.body);
    acknowledged.push(after.json().id);
    // Every acknowledged write is there and the chain verifies. A write whose connection died
    // during COMMIT may have committed without its answer (a retry with its Idempotency-Key then
    // replays it), so the chain holds at most one record more per failed write, never part of one.
    const chain = await assertChainVerifies(store, agent);
    const ids = new Set(chain.map((r) => r.id));
    assert.ok(acknowledged.every((id) => ids.has(id)), 'every 201 is in the chain');
    assert.ok(chain.length <= acknowledged.length + bodies.length, `${chain.length} records for ${acknowledged.length} acknowledged and ${bodies.length} failed writes`);
  });
});
