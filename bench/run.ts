// `npm run bench [-- [suite...] [flags]]`: runs the named benchmark suites (every suite, in
// order, when none is named), prints each report and saves it as
// bench/results/<suite>-<ISO date>.md. Suite names come first; the flags after them go to each
// suite, which parses its own (see bench/README.md); --help prints each named suite's flags.
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchPath, UsageError } from './harness.ts';

/** A suite parses its flags, measures, and returns its report (markdown). */
type Suite = { usage: string; run: (args: string[]) => Promise<string> };

const SUITES: Record<string, Suite> = {
  write: {
    usage: '[--duration 12] [--rounds 6] [--warmup 3] [--connections 64] [--agents 200] [--no-postgres] [--no-ladder] [--metrics] [--against <checkout>] [--profile <dir>]',
    run: async (args) => {
      const m = await import('./write.ts');
      return m.writeBench(m.writeOptions(args));
    },
  },
  read: {
    usage: '[--records 10000,1000000] [--duration 10] [--rounds 5] [--warmup 2] [--connections 4] [--no-postgres] [--no-verify]',
    run: async (args) => {
      const m = await import('./read.ts');
      return m.readBench(m.readOptions(args));
    },
  },
  log: {
    usage: '[--records 10000,100000] [--rate 200] [--seconds 30] [--duration 10] [--connections 4] [--no-postgres]',
    run: async (args) => {
      const m = await import('./log.ts');
      return m.logBench(m.logOptions(args));
    },
  },
  witness: {
    usage: '[--rate 200] [--seconds 30] [--no-postgres]',
    run: async (args) => {
      const m = await import('./witness.ts');
      return m.witnessBench(m.witnessOptions(args));
    },
  },
  site: {
    usage: '[--records 1000000] [--duration 10] [--warmup 2] [--connections 4] [--no-postgres]',
    run: async (args) => {
      const m = await import('./site.ts');
      return m.siteBench(m.siteOptions(args));
    },
  },
  directory: {
    usage: '[--agents 100000] [--deep 50000] [--duration 10] [--warmup 2] [--connections 4] [--no-postgres]',
    run: async (args) => {
      const m = await import('./directory.ts');
      return m.directoryBench(m.directoryOptions(args));
    },
  },
  pricing: {
    usage: '[--records 100000] [--repeats 50] [--no-postgres]',
    run: async (args) => {
      const m = await import('./pricing.ts');
      return m.pricingBench(m.pricingOptions(args));
    },
  },
  brokers: {
    usage: '[--fills 50000] [--duration 10] [--connections 64] [--no-postgres]',
    run: async (args) => {
      const m = await import('./brokers.ts');
      return m.brokersBench(m.brokersOptions(args));
    },
  },
  performance: {
    usage: '[--decisions 100000] [--years 5] [--reads 400] [--actions 40] [--no-postgres]',
    run: async (args) => {
      const m = await import('./performance.ts');
      return m.performanceBench(m.performanceOptions(args));
    },
  },
  webhooks: {
    usage: '[--rate 100] [--seconds 20] [--no-postgres] [--profile <dir>]',
    run: async (args) => {
      const m = await import('./webhooks.ts');
      return m.webhooksBench(m.webhooksOptions(args));
    },
  },
  applock: {
    usage: '[--duration 40] [--rounds 8] [--warmup 3] [--connections 64] [--agents 200] [--nodes 3] [--in-flight 1]',
    run: async (args) => {
      const m = await import('./applock.ts');
      return m.applockBench(m.applockOptions(args));
    },
  },
  hostile: {
    usage: '[--decisions 1500] [--rate 50] [--seconds 20] [--rounds 1] [--connections 64] [--no-postgres] [--profile <dir>]',
    run: async (args) => {
      const m = await import('./hostile.ts');
      return m.hostileBench(m.hostileOptions(args));
    },
  },
  client: {
    usage: '[--rounds 12] [--decisions 200] [--warmup 1] [--no-postgres]',
    run: async (args) => {
      const m = await import('./client.ts');
      return m.clientBench(m.clientOptions(args));
    },
  },
};

const argv = process.argv.slice(2);
let split = argv.findIndex((a) => !Object.hasOwn(SUITES, a));
if (split < 0) split = argv.length;
const suites = split > 0 ? argv.slice(0, split) : Object.keys(SUITES);
const flags = argv.slice(split);
if (flags[0] !== undefined && !flags[0].startsWith('-')) {
  console.error(`bench: no suite named ${flags[0]}; suites come first, then flags:`);
  for (const [name, suite] of Object.entries(SUITES)) console.error(`  npm run bench -- ${name} ${suite.usage}`);
  process.exit(2);
}

if (flags.includes('--help') || flags.includes('-h')) {
  for (const name of suites) console.log(`npm run bench -- ${name} ${SUITES[name]!.usage}`);
  console.log('Suite names come first, then flags. What each suite measures: bench/README.md; how to run them and the figures: docs/benchmarks.md');
  process.exit(0);
}

const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
mkdirSync(benchPath('./results/'), { recursive: true });
for (const name of suites) {
  process.stderr.write(`bench ${name}\n`);
  let report: string;
  try {
    report = await SUITES[name]!.run(flags);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`bench ${name}: ${err.message}\n  npm run bench -- ${name} ${SUITES[name]!.usage}`);
    process.exit(2);
  }
  process.stdout.write(`\n${report}\n`);
  const file = benchPath(`./results/${name}-${stamp}.md`);
  writeFileSync(file, report);
  process.stderr.write(`saved ${file}\n`);
}
