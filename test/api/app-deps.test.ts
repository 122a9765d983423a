// compose's `decisions` replacement: a record path given to it is the one the app
// serves; without it, the app builds and serves the real one on its store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { DecisionService, type DecisionOutcome } from '../../src/ledger/decisions.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { openStore } from '../../src/store/open.ts';
import { postDecision } from '../support/app.ts';

const FAKE_BODY = JSON.stringify({ object: 'decision', fake: true });

/** A record path that answers every write with a fixed 201 and stores nothing. */
class FixedAnswer extends DecisionService {
  calls = 0;
  override async record(): Promise<DecisionOutcome> {
    this.calls += 1;
    return { kind: 'created', status: 201, body: FAKE_BODY };
  }
}

async function appWith(inject: boolean) {
  const store = openStore('sqlite::memory:');
  await store.migrate();
  const config = loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' });
  const checkSignature = signatureChecker(store);
  const fake = new FixedAnswer({ store, clock: systemClock, baseUrl: config.baseUrl, checkSignature });
  const ledger = await buildApp(compose({ store, config, checkSignature }, { ...(inject ? { decisions: fake } : {}) }));
  const created = await new Operators(store, systemClock).createAgent({ handle: inject ? 'with-fake' : 'without-fake', demo: false });
  if (!created.ok) throw new Error(created.error.message);
  const close = async () => {
    await ledger.close();
    await store.close();
  };
  return { ledger, store, fake, agentId: created.value.agent.id, secret: created.value.apiKey.secret, close };
}

test('a record path given to compose answers the writes, and nothing is stored', async () => {
  const t = await appWith(true);
  try {
    assert.equal(t.ledger.decisions, t.fake);
    const res = await postDecision(t.ledger, t.secret, { symbol: 'AAPL', action: 'BUY' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.body, FAKE_BODY);
    assert.equal(t.fake.calls, 1);
    assert.equal((await t.store.chainHead(t.agentId)).seq, 0);
  } finally {
    await t.close();
  }
});

test('without one, the composed app serves the real record path on its store', async () => {
  const t = await appWith(false);
  try {
    assert.notEqual(t.ledger.decisions, t.fake);
    assert.ok(t.ledger.decisions instanceof DecisionService);
    const res = await postDecision(t.ledger, t.secret, { symbol: 'AAPL', action: 'BUY' });
    assert.equal(res.statusCode, 201, res.body);
    assert.notEqual(res.body, FAKE_BODY);
    assert.equal(t.fake.calls, 0);
    assert.equal((await t.store.chainHead(t.agentId)).seq, 1);
  } finally {
    await t.close();
  }
});
