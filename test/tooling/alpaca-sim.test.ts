// Self-tests of the Alpaca simulator (test/sim/alpaca.ts), not of the product: its own rate limit
// and its named scenarios. Reported apart from the product's tests (test/tooling/).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AlpacaClient } from '../../src/brokers/alpaca.ts';
import type { HttpPolicy } from '../../src/brokers/http.ts';
import { ALPACA_SCENARIOS, dayOfFills, startAlpacaSim, yearOfFills, type AlpacaScenario, type AlpacaSim } from '../sim/alpaca.ts';

const sims: AlpacaSim[] = [];
after(async () => {
  for (const s of sims) await s.close();
});

async function sim(scenario: AlpacaScenario): Promise<AlpacaSim> {
  const s = await startAlpacaSim({ scenario });
  sims.push(s);
  return s;
}

function client(s: AlpacaSim, http: Partial<HttpPolicy> = {}): AlpacaClient {
  const keys = s.scenario.keys[0]!;
  return new AlpacaClient({ credentials: { keyId: keys.keyId, secretKey: keys.secretKey }, environment: 'paper', baseUrl: s.url, http: { sleep: async () => {}, ...http } });
}

describe('Alpaca simulator', () => {
  it('limits to its requests a minute (200 by default)', async () => {
    const s = await sim(dayOfFills({ rateLimitPerMinute: 3 }));
    const c = client(s, { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 } });
    for (let i = 0; i < 3; i++) assert.ok((await c.account()).ok);
    const r = await c.account();
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'rate_limited');
  });

  it('every named scenario starts and answers the account (or refuses as scripted)', async () => {
    for (const [name, make] of Object.entries(ALPACA_SCENARIOS)) {
      if (name === 'year') continue; // built in the bench; 50,000 fills
      const r = await client(await sim(make())).account();
      assert.ok(r.ok || ['outage', 'rate-limit-storm'].includes(name), name);
    }
  });

  it('a year of fills pages through once each (5,000-fill sample of the generator)', async () => {
    const ids = new Set<string>();
    for await (const page of client(await sim(yearOfFills(5000))).fills()) {
      assert.ok(page.ok, page.ok ? '' : page.error.message);
      for (const f of page.value.fills) ids.add(f.id);
    }
    assert.equal(ids.size, 5000);
  });
});
