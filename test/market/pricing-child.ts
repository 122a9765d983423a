// A process that runs only the pricing job on a shared database against the Alpaca data
// simulator, for the kill test (killed with SIGKILL mid-batch, then started again).
// Usage: node --import tsx test/market/pricing-child.ts <database url> <simulator url>
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import { PricingJob } from '../../src/market/pricing.ts';
import { openStore } from '../../src/store/open.ts';

const [databaseUrl, simUrl] = process.argv.slice(2) as [string, string];
const store = openStore(databaseUrl);
await store.migrate();
const job = new PricingJob({
  market: new AlpacaMarketData({ keyId: 'PKKILLTEST', secret: 'sim-secret-kill', baseUrl: simUrl, retryDelayMs: 1 }),
  store: store.market,
  batchSize: 10,
  concurrency: 2,
  flushEvery: 1,
  pollMs: 20,
  holdRetryMs: 50,
  onNotice: (level, message) => console.error(`${level}: ${message}`),
});
job.start();
console.log('pricing');
process.once('SIGTERM', () => {
  void job.stop().then(() => store.close()).then(() => process.exit(0));
});
