// The real service for the benchmarks, run as a child process: startServer (the code `ledger
// serve` runs) configured from the environment; tells the parent its address over IPC. With
// BENCH_SERVER_FROM_DIST=1, the compiled dist/ (what `ledger serve` runs, built by `npm run
// bench`), so that its threads load no TypeScript loader; otherwise src/ under tsx.
import type * as Server from '../src/server.ts';
import type * as Settings from '../src/config.ts';
import { serveAsChild } from './child.ts';

const fromDist = process.env.BENCH_SERVER_FROM_DIST === '1';
const { startServer } = await import(fromDist ? '../dist/server.js' : '../src/server.ts') as typeof Server;
const { loadConfig } = await import(fromDist ? '../dist/config.js' : '../src/config.ts') as typeof Settings;

const server = await startServer(loadConfig(process.env));
serveAsChild(server.url, server.stop);
