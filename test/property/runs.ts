// How many bodies the hostile-input property sends per store. CI keeps the default sizes; the
// nightly mode (`npm run test:nightly`, or LEDGER_PROPERTY_RUNS=<n> on any test command) sends
// <n> bodies to each store, split between the two properties as the defaults are.
export type PropertyRuns = { mutated: number; anything: number };

export const DEFAULT_RUNS: Record<'sqlite' | 'postgres', PropertyRuns> = {
  sqlite: { mutated: 1200, anything: 1000 },
  postgres: { mutated: 250, anything: 200 },
};

/** The runs for `store`, from LEDGER_PROPERTY_RUNS when it is set (a whole number of bodies, at least 2). */
export function propertyRuns(store: 'sqlite' | 'postgres', env: NodeJS.ProcessEnv = process.env): PropertyRuns {
  const raw = env.LEDGER_PROPERTY_RUNS;
  if (raw === undefined || raw === '') return DEFAULT_RUNS[store];
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 2 || !Number.isSafeInteger(Number(raw))) {
    throw new Error(`LEDGER_PROPERTY_RUNS must be a whole number of bodies, at least 2, got ${JSON.stringify(raw)}`);
  }
  const total = Number(raw);
  const { mutated, anything } = DEFAULT_RUNS[store];
  const share = Math.max(1, Math.round((total * mutated) / (mutated + anything)));
  return { mutated: Math.min(share, total - 1), anything: total - Math.min(share, total - 1) };
}

/** A nightly run takes as long as it takes: no per-test timeout then. */
export const nightly = (env: NodeJS.ProcessEnv = process.env): boolean => (env.LEDGER_PROPERTY_RUNS ?? '') !== '';

/** Worlds the perf_v2 engine properties try: CI's size, or LEDGER_PROPERTY_RUNS worlds in the nightly mode. */
export const ENGINE_DEFAULT_RUNS = 150;

export function engineRuns(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LEDGER_PROPERTY_RUNS;
  if (raw === undefined || raw === '') return ENGINE_DEFAULT_RUNS;
  propertyRuns('sqlite', env); // the same check of the variable
  return Number(raw);
}
