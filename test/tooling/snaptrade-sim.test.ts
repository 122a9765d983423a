// Self-tests of the SnapTrade simulator (test/sim/snaptrade.ts), not of the product: it checks
// request signatures as SnapTrade does. Reported apart from the product's tests (test/tooling/).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { snapTradeSignature } from '../../src/brokers/snaptrade.ts';
import { snapTradeDay, startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';

const sims: SnapTradeSim[] = [];
after(async () => {
  for (const s of sims) await s.close();
});

async function sim(): Promise<SnapTradeSim> {
  const s = await startSnapTradeSim({ scenario: snapTradeDay() });
  sims.push(s);
  return s;
}

describe('SnapTrade simulator checks authentication as SnapTrade does', () => {
  it('refuses a tampered query, a millisecond timestamp and a missing signature', async () => {
    const s = await sim();
    const { clientId, consumerKey } = s.scenario.partner;
    const ts = String(Math.floor(Date.now() / 1000));
    const query = `clientId=${clientId}&timestamp=${ts}`;
    const body = { userId: 'agt_raw' };
    const sign = (q: string): string => snapTradeSignature(consumerKey, { content: body, path: '/snapTrade/registerUser', query: q });
    const post = (q: string, signature?: string): Promise<Response> =>
      fetch(`${s.url}/snapTrade/registerUser?${q}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { Signature: signature } : {}) }, body: JSON.stringify(body) });
    const tampered = await post(`${query}&x=1`, sign(query));
    assert.equal(tampered.status, 401);
    assert.equal(((await tampered.json()) as { code: string }).code, '1076');
    const msQuery = `clientId=${clientId}&timestamp=${Date.now()}`;
    const ms = await post(msQuery, sign(msQuery));
    assert.equal(ms.status, 401);
    assert.match(((await ms.json()) as { detail: string }).detail, /Invalid timestamp/);
    assert.equal((await post(query)).status, 401);
    const ok = await post(query, sign(query));
    assert.equal(ok.status, 200);
  });
});
