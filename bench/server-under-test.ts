// The real service for the write benchmark, run as a child process: startServer (the code
// `ledger serve` runs) configured from the environment; tells the parent its address over IPC.
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';

const server = await startServer(loadConfig(process.env));
process.send?.({ ready: server.url });
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
process.on('disconnect', () => process.exit(0)); // the benchmark went away
