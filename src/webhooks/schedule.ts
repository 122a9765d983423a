// When a failed delivery is tried again: exponential backoff, doubling from `baseMs` (5 s) up to
// `maxDelayMs` (12 h), with up to 10 % random spread so that receivers coming back are not hit by
// every node's retries at once, for `giveUpAfterMs` (3 days) counted from the message's first
// attempt. The last retry is placed at the end of the window; when it fails too, the message is
// failed for good (docs/webhooks.md lists the schedule).
export type RetryPolicy = { baseMs: number; maxDelayMs: number; giveUpAfterMs: number; jitter: number };

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 5_000, maxDelayMs: 12 * 3600_000, giveUpAfterMs: 3 * 86_400_000, jitter: 0.1 };

/** The delay after the `attempt`-th failed attempt (1-based), before any spread. */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attempt - 1, 40));
}

/**
 * When to try again after the `attempt`-th attempt failed at `nowMs` (the first attempt was at
 * `firstMs`), or null when the window is over and the message fails for good.
 */
export function nextAttemptMs(policy: RetryPolicy, attempt: number, firstMs: number, nowMs: number, random = Math.random): number | null {
  const end = firstMs + policy.giveUpAfterMs;
  if (nowMs >= end) return null;
  const delay = backoffMs(policy, attempt) * (1 + policy.jitter * random());
  return Math.min(nowMs + Math.round(delay), end);
}

/** The schedule without spread, from the first attempt: the offsets (ms) of every attempt. */
export function scheduleOffsets(policy: RetryPolicy): number[] {
  const out = [0];
  for (let attempt = 1; ; attempt++) {
    const next = nextAttemptMs({ ...policy, jitter: 0 }, attempt, 0, out[out.length - 1]!);
    if (next === null) return out;
    out.push(next);
  }
}
