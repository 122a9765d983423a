// `npm run bench [-- <suite>...] [--duration s] [--warmup s] [--connections n] [--agents n]
// [--no-postgres] [--profile dir]`: runs the named benchmark suites (all of them, in order, when
// none is named), prints each suite's report and saves it as bench/results/<suite>-<ISO date>.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchPath, type BenchOptions } from './harness.ts';

/** A suite measures and returns its report (markdown). Suites run in this order. */
type Suite = (options: BenchOptions) => Promise<string>;
const SUITES: Record<string, Suite> = {
  write: async (o) => (await import('./write.ts')).writeBench(o),
};

function usage(message: string): never {
  console.error(`bench: ${message}`);
  console.error(`usage: npm run bench -- [${Object.keys(SUITES).join('|')}...] [--duration 10] [--warmup 3] [--connections 64] [--agents 200] [--no-postgres] [--profile <dir>]`);
  process.exit(2);
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) usage(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function parse(argv: string[]): { suites: string[]; options: BenchOptions } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        agents: { type: 'string' },
        'no-postgres': { type: 'boolean' },
        profile: { type: 'string' },
      },
    });
  } catch (err) {
    usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  const unknown = positionals.find((s) => !(s in SUITES));
  if (unknown !== undefined) usage(`no suite named ${unknown}`);
  return {
    suites: positionals.length > 0 ? positionals : Object.keys(SUITES),
    options: {
      duration: positiveInteger('duration', values.duration, 10),
      warmup: values.warmup === '0' ? 0 : positiveInteger('warmup', values.warmup, 3),
      connections: positiveInteger('connections', values.connections, 64),
      agents: positiveInteger('agents', values.agents, 200),
      postgres: !values['no-postgres'],
      profileDir: values.profile ?? null,
    },
  };
}

const { suites, options } = parse(process.argv.slice(2));
const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
const resultsDir = benchPath('./results/');
mkdirSync(resultsDir, { recursive: true });
for (const name of suites) {
  process.stderr.write(`bench ${name}\n`);
  const report = await SUITES[name]!(options);
  process.stdout.write(`\n${report}\n`);
  const file = `${resultsDir}${name}-${stamp}.md`;
  writeFileSync(file, report);
  process.stderr.write(`saved ${file}\n`);
}
