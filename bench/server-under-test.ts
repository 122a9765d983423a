// The real service for the write benchmark, run as a child process: startServer (the code
// `ledger serve` runs) configured from the environment; tells the parent its address over IPC.
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { serveAsChild } from './child.ts';

const server = await startServer(loadConfig(process.env));
serveAsChild(server.url, server.stop);
