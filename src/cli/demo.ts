// `ledger demo`: demo agents with a year of decisions on synthetic prices (src/cli/demo-agents.ts
// says what they are and how they are recorded), on the configured database, with or without the
// service running.
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';

type Options = { database?: string; json?: boolean; prefix: string; days: string };

export function registerDemoCommand(program: Command): void {
  program.command('demo')
    .description('Create demo agents (flagged demo) with about a year of decisions priced by the synthetic model')
    .option('--database <url>', 'sqlite:<path> or postgres://... (default: LEDGER_DATABASE_URL)')
    .option('--prefix <prefix>', 'handle prefix of the demo agents', 'demo')
    .option('--days <days>', 'days of history, ending now (a year and a week, so every metric has its history)', '372')
    .option('--json', 'print JSON')
    .action(async (opts: Options) => {
      const days = Number(opts.days);
      if (!/^[0-9]+$/.test(opts.days) || days < 30 || days > 3650) throw new Error('--days must be a whole number from 30 to 3650');
      if (!/^[a-z0-9][a-z0-9_-]{0,20}$/.test(opts.prefix)) throw new Error('--prefix must be 1 to 21 characters: a-z, 0-9, _ or -, starting with a letter or digit');
      const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
      const [{ DEFAULT_SYNTHETIC_SEED }, { SyntheticMarketData }, { createDemo }, { openStore }] = await Promise.all([
        import('../market/select.ts'), import('../market/synthetic.ts'), import('./demo-agents.ts'), import('../store/open.ts'),
      ]);
      const store = openStore(config.databaseUrl);
      try {
        await store.migrate();
        const seed = config.market.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED;
        const progress = opts.json ? undefined : (line: string) => process.stderr.write(`${line}\n`);
        const created = await createDemo({ store, market: store.market, synthetic: new SyntheticMarketData(seed), benchmark: config.performance.benchmark, now: new Date(), progress }, { prefix: opts.prefix, days });
        if (!created.ok) throw new Error(created.error.message);
        if (opts.json) return console.log(JSON.stringify(created.value, null, 2));
        for (const a of created.value) {
          console.log(`${a.handle}\t${a.decisions} decisions${a.signed ? ', signed' : ''}\t${a.first_recorded_at} .. ${a.last_recorded_at}\t${config.baseUrl}/agents/${a.handle}`);
        }
        console.log('Demo agents are hidden from /v1/ledger unless include_demo=true; their figures are synthetic.');
      } finally {
        await store.close();
      }
    });
}
