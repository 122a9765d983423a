// A market-data failure as the API's error (interface section 7): what an endpoint that needs a
// price it cannot get answers. Any failure to get a price is 502 `provider_error` (the provider
// failed or has no price; nothing was recorded); a request the provider refused as malformed is
// the caller's 400.
import { errors, type LedgerError } from '../domain/errors.ts';
import type { MarketError } from './port.ts';

export function apiErrorOf(e: MarketError, param?: string): LedgerError {
  switch (e.code) {
    case 'invalid_request':
      return errors.invalidRequest(e.message, param);
    case 'rate_limited':
      return errors.providerError(`the market-data provider is rate limited (retry in ${Math.ceil(e.retry_after_ms / 1000)} s): ${e.message}`);
    case 'not_configured':
      return errors.providerError(`no market data: ${e.message}`);
    case 'unknown_symbol':
    case 'no_price':
      return errors.providerError(`the market-data provider has no price for ${e.symbol}: ${e.message}`);
    default:
      return errors.providerError(`the market-data provider failed: ${e.message}`);
  }
}
