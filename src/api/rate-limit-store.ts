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
type LocalInner = Inner & { lru: { get(key: string): { current: number } | undefined } };

/** A budget that can give back a unit it counted (an idempotent replay of a write costs nothing). */
export type RefundableStore = FastifyRateLimitStore & { refund(key: string): void };
type StoreParams = { continueExceeding?: boolean; exponentialBackoff?: boolean };

const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as
  new (continueExceeding: boolean, exponentialBackoff: boolean) => LocalInner;

const snapshot = (cb: Callback): Callback => (error, result) =>
  cb(error, result === undefined ? undefined : { current: result.current, ttl: result.ttl });

export class SnapshotLocalStore implements RefundableStore {
  private readonly inner: LocalInner;

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

  refund(key: string): void {
    const counter = this.inner.lru.get(key);
    if (counter && counter.current > 0) counter.current--;
  }
}

type RedisLike = {
  status: string;
  on(event: 'ready' | 'error' | 'end', listener: (...args: unknown[]) => void): unknown;
  eval(script: string, keys: number, ...args: string[]): Promise<unknown>;
};

/** Gives back one unit of a live window; never below zero, never touching the window's expiry. */
const REFUND_LUA = `local v = redis.call('GET', KEYS[1])
if v and tonumber(v) > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as
  new (continueExceeding: boolean, exponentialBackoff: boolean, redis: RedisLike, key: string) => Inner;

/**
 * The shared budget, in Redis, while Redis answers; each process's own budget while it does not.
 * A Redis outage must not turn requests into 500s: the limiter falls back (told once through
 * `onChange(false)`) and resumes the shared budget when Redis is ready again (`onChange(true)`).
 * While Redis is away, commands are not queued for it: each request is counted locally at once.
 */
export class SharedBudget {
  private shared: boolean;
  /** Times the budget fell back to per-process counting (for the metrics). */
  fallbacks = 0;

  constructor(private readonly redis: RedisLike, private readonly nameSpace: string, private readonly onChange: (shared: boolean) => void) {
    // Shared until Redis is seen failing, so that connecting at start-up is not logged as a recovery.
    this.shared = true;
    redis.on('ready', () => this.set(true));
    redis.on('error', () => this.set(false));
    redis.on('end', () => this.set(false));
  }

  /** Whether requests are counted in the shared budget now. */
  get isShared(): boolean {
    return this.shared;
  }

  private set(shared: boolean): void {
    if (shared === this.shared) return;
    this.shared = shared;
    if (!shared) this.fallbacks++;
    this.onChange(shared);
  }

  /** The store class @fastify/rate-limit instantiates (it passes only the limit's parameters). */
  storeClass(): new (params: StoreParams) => RefundableStore {
    const budget = this;
    return class SharedOrLocalStore implements RefundableStore {
      private readonly remote: Inner;
      private readonly local: SnapshotLocalStore;

      constructor(params: StoreParams) {
        this.remote = new RedisStore(params.continueExceeding === true, params.exponentialBackoff === true, budget.redis, budget.nameSpace);
        this.local = new SnapshotLocalStore(params);
      }

      incr(key: string, cb: Callback, timeWindow: number, max: number): void {
        this.count('incr', key, cb, timeWindow, max);
      }

      read(key: string, cb: Callback, timeWindow: number, max: number): void {
        this.count('read', key, cb, timeWindow, max);
      }

      child(params: object): RefundableStore {
        return new SharedOrLocalStore(params as StoreParams);
      }

      /** Refunds where the budget counts now (a unit counted just before an outage stays spent). */
      refund(key: string): void {
        if (budget.redis.status !== 'ready') return this.local.refund(key);
        budget.redis.eval(REFUND_LUA, 1, `${budget.nameSpace}${key}`).catch(() => undefined);
      }

      private count(method: 'incr' | 'read', key: string, cb: Callback, timeWindow: number, max: number): void {
        if (budget.redis.status !== 'ready') {
          budget.set(false);
          return this.local[method](key, cb, timeWindow, max);
        }
        this.remote[method](key, (error, result) => {
          if (!error) return cb(null, result);
          budget.set(false);
          this.local[method](key, cb, timeWindow, max);
        }, timeWindow, max);
      }
    };
  }
}
