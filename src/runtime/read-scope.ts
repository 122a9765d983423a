// Which work is a public read. The HTTP layer runs every public read inside this scope
// (api/read-gate.ts); a store that has a resource to share between the record path and the
// reads (PostgreSQL's connections) gives the reads their own, smaller share of it, so a flood
// of anonymous reads can never take the connections a write needs.
// This folder imports nothing of the project, and anything may import it.
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<true>();

/** Runs `work` (and everything it starts) as a public read. */
export function runAsPublicRead<T>(work: () => T): T {
  return scope.run(true, work);
}

/** True inside runAsPublicRead. */
export function inPublicRead(): boolean {
  return scope.getStore() === true;
}
