// The Alpaca simulator for the brokers benchmark, run as a child process so its serving CPU and
// its scenario's memory stay out of the process that syncs: the `year` scenario with
// BENCH_FILLS fills (default 50,000).
import { startAlpacaSim, yearOfFills } from '../test/sim/alpaca.ts';
import { serveAsChild } from './child.ts';

const sim = await startAlpacaSim({ scenario: yearOfFills(Number(process.env.BENCH_FILLS ?? 50_000)) });
serveAsChild(sim.url, () => sim.close());
