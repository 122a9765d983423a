// The `none` market-data provider: nothing is priced, and every answer says why.
import type { CorporateAction, DailyBars, MarketData, MarketResult, TradePrice } from './port.ts';

export class NoMarketData implements MarketData {
  readonly source = 'none' as const;
  readonly synthetic = false;

  constructor(readonly description: string) {}

  async latestTrade(): Promise<MarketResult<TradePrice>> {
    return { ok: false, error: { code: 'not_configured', message: this.description } };
  }

  async dailyBars(): Promise<MarketResult<DailyBars>> {
    return { ok: false, error: { code: 'not_configured', message: this.description } };
  }

  async corporateActions(): Promise<MarketResult<CorporateAction[]>> {
    return { ok: false, error: { code: 'not_configured', message: this.description } };
  }
}
