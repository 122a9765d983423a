// Reported positions against the positions implied by imported fills.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AlpacaClient, type AlpacaFillActivity, type AlpacaOrder } from '../../src/brokers/alpaca.ts';
import { alpacaFills, indexOrders } from '../../src/brokers/normalise.ts';
import { alpacaReportedPositions, impliedPositions, reconcilePositions, snapTradeReportedPositions } from '../../src/brokers/reconcile.ts';
import { dayOfFills, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';

let sim: AlpacaSim;
after(async () => {
  await sim?.close();
});

describe('reconcilePositions', () => {
  it('the simulator\'s positions match its fills; a missing fill is a mismatch, not smoothed', async () => {
    sim = await startAlpacaSim({ scenario: dayOfFills() });
    const c = new AlpacaClient({ credentials: sim.scenario.keys[0]!, environment: 'paper', baseUrl: sim.url });
    const orders: AlpacaOrder[] = [];
    for await (const p of c.orders()) orders.push(...(p.ok ? p.value.orders : assert.fail(p.error.message)));
    const acts: AlpacaFillActivity[] = [];
    for await (const p of c.fills()) acts.push(...(p.ok ? p.value.fills : assert.fail(p.error.message)));
    const { fills } = alpacaFills({ accountRef: 'acc', activities: acts, orders: indexOrders(orders) });
    const positions = await c.positions();
    assert.ok(positions.ok);
    const checks = reconcilePositions(impliedPositions(fills), alpacaReportedPositions(positions.value));
    assert.ok(checks.length > 0);
    assert.ok(checks.every((x) => x.matches), JSON.stringify(checks.filter((x) => !x.matches)));

    const missing = fills.filter((f) => !(f.symbol === 'AAPL' && f.cumulativeQuantity === '4'));
    const aapl = reconcilePositions(impliedPositions(missing), alpacaReportedPositions(positions.value)).find((x) => x.symbol === 'AAPL');
    assert.deepEqual(aapl, { symbol: 'AAPL', implied: '9', reported: '10', matches: false });
  });

  it('exact decimals, crypto symbol forms, positions without fills and fills without positions', () => {
    const implied = impliedPositions([
      { symbol: 'BTC/USD', side: 'buy', quantity: '0.1' }, { symbol: 'BTC/USD', side: 'buy', quantity: '0.2' },
      { symbol: 'ETH/USD', side: 'buy', quantity: '1' }, { symbol: 'ETH/USD', side: 'sell', quantity: '1.0' },
      { symbol: 'KO', side: 'sell', quantity: '5' },
    ]);
    const checks = reconcilePositions(implied, [{ symbol: 'BTCUSD', quantity: '0.30' }, { symbol: 'VTI', quantity: '3' }]);
    assert.deepEqual(checks, [
      { symbol: 'BTCUSD', implied: '0.3', reported: '0.3', matches: true },
      { symbol: 'KO', implied: '-5', reported: '0', matches: false },
      { symbol: 'VTI', implied: '0', reported: '3', matches: false },
    ]);
  });

  it('reads SnapTrade positions/all', () => {
    const reported = snapTradeReportedPositions({ results: [{ instrument: { symbol: 'SPY' }, units: '12' }, { instrument: {}, units: '1' }] });
    assert.deepEqual(reported, [{ symbol: 'SPY', quantity: '12' }]);
  });
});
