// The write rate limit of POST /v1/decisions: `max` writes a minute per API key, counted before
// the body is read (a client past its budget costs no parsing). An idempotent replay records
// nothing, so it costs nothing: its unit is given back once the answer is known to be a replay,
// and past the limit a request whose Idempotency-Key is already recorded is let through to be
// replayed (the only case that asks the store, and only once the budget is spent).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../domain/errors.ts';
import { holderOf } from './auth.ts';
import { ApiError } from './errors.ts';
import type { RefundableStore } from './rate-limit-store.ts';

export type WriteLimitOptions = {
  max: number;
  store: RefundableStore;
  /** Whether this request's Idempotency-Key is already recorded for its agent (asked only past the limit). */
  isRecordedKey: (request: FastifyRequest) => Promise<boolean>;
};

const WINDOW_MS = 60_000;
/** The budget key a request was counted under, to give the unit back if it is replayed. */
const counted = new WeakMap<FastifyRequest, string>();

function take(store: RefundableStore, key: string, max: number): Promise<{ current: number; ttl: number }> {
  return new Promise((resolve, reject) => {
    store.incr(key, (err, result) => (err || !result ? reject(err ?? new Error('no count')) : resolve(result)), WINDOW_MS, max);
  });
}

const inSeconds = (s: number) => `${s} second${s === 1 ? '' : 's'}`;

/** The preParsing hook that counts a write, answering 429 past the budget. */
export function writeLimitHook(options: WriteLimitOptions) {
  const { max, store } = options;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = `write:${holderOf(request).key.id}`;
    const { current, ttl } = await take(store, key, max);
    const reset = Math.ceil(ttl / 1000);
    reply.header('ratelimit-limit', max).header('ratelimit-remaining', Math.max(0, max - current)).header('ratelimit-reset', reset);
    if (current <= max) {
      counted.set(request, key);
      return;
    }
    if (await options.isRecordedKey(request)) return;
    reply.header('retry-after', reset);
    throw new ApiError(errors.rateLimitExceeded(`too many requests: at most ${max} per minute; retry in ${inSeconds(reset)}`));
  };
}

/** After an idempotent replay: the write it was counted as never happened. */
export function refundWrite(store: RefundableStore, request: FastifyRequest, reply: FastifyReply): void {
  const key = counted.get(request);
  if (key === undefined) return;
  counted.delete(request);
  store.refund(key);
  const remaining = Number(reply.getHeader('ratelimit-remaining'));
  if (Number.isInteger(remaining)) reply.header('ratelimit-remaining', remaining + 1);
}
