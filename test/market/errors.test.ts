// A market-data failure as the API's error: 502 provider_error when no price can be had, 400 for a
// malformed request; the 2.7 body's fields, and never a secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiErrorOf } from '../../src/market/errors.ts';

test('every failure to get a price is 502 provider_error; a malformed request is 400', () => {
  const cases = [
    apiErrorOf({ code: 'provider_error', message: 'Alpaca answered 503: upstream', status: 503 }),
    apiErrorOf({ code: 'rate_limited', retry_after_ms: 2500, message: 'Alpaca answered 429' }),
    apiErrorOf({ code: 'not_configured', message: 'LEDGER_MARKET_DATA is none' }),
    apiErrorOf({ code: 'unknown_symbol', symbol: 'ZZZZ', message: 'no trade known for ZZZZ' }),
    apiErrorOf({ code: 'no_price', symbol: 'SPY', message: 'no bars' }),
  ];
  for (const e of cases) assert.deepEqual([e.status, e.type, e.code], [502, 'api_error', 'provider_error']);
  assert.match(cases[1]!.message, /retry in 3 s/);
  assert.match(cases[3]!.message, /ZZZZ/);
  assert.deepEqual(apiErrorOf({ code: 'invalid_request', message: 'bad date range' }, 'from'),
    { status: 400, type: 'invalid_request_error', code: 'invalid_request', message: 'bad date range', param: 'from' });
});
