// The in-memory rate-limit budget: @fastify/rate-limit's own LocalStore, except that each
// request is answered with its own count. LocalStore hands every caller the same mutable counter
// object, which the plugin reads only after an await; in a concurrent burst every request then
// saw the burst's final count: one RateLimit-Remaining for all, and 429s for writes that were
// within budget. (The Redis store answers each call with its own values and needs no help.)
import { createRequire } from 'node:module';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';

type Counted = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Counted) => void;
type Inner = {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max: number): void;
};
type StoreParams = { continueExceeding?: boolean; exponentialBackoff?: boolean };

const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as
  new (continueExceeding: boolean, exponentialBackoff: boolean) => Inner;

const snapshot = (cb: Callback): Callback => (error, result) =>
  cb(error, result === undefined ? undefined : { current: result.current, ttl: result.ttl });

export class SnapshotLocalStore implements FastifyRateLimitStore {
  private readonly inner: Inner;

  constructor(params: StoreParams) {
    this.inner = new LocalStore(params.continueExceeding === true, params.exponentialBackoff === true);
  }

  incr(key: string, cb: Callback, timeWindow: number, max: number): void {
    this.inner.incr(key, snapshot(cb), timeWindow, max);
  }

  read(key: string, cb: Callback, timeWindow: number, max: number): void {
    this.inner.read(key, snapshot(cb), timeWindow, max);
  }

  child(params: object): SnapshotLocalStore {
    return new SnapshotLocalStore(params as StoreParams);
  }
}
