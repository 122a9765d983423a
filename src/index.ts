// The package's entry (`import ... from 'decision-ledger'`): the pure core (canonical form,
// hashing, chain and record verification) and the service's start. `decision-ledger/core`
// is the core alone, without loading the HTTP stack.
export * from './core/index.ts';
export { ConfigError, loadConfig, type Config } from './config.ts';
export { startServer } from './server.ts';
