// The webhooks wing composed from the configuration: the master keyring of the vault (the same
// key that seals broker credentials, loaded once), the endpoints use case the routes call, and
// the deliverer run beside the HTTP service until shutdown (compose.ts starts and stops it). On PostgreSQL every API
// node runs a deliverer; the advisory lock lets one of them deliver, and another takes over when
// it dies.
import type { WebhookConfig } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { Keyring } from '../vault/vault.ts';
import type { LedgerStore } from '../store/port.ts';
import type { Resolve } from './address.ts';
import { Deliverer } from './deliverer.ts';
import { openSecret, WebhookEndpoints } from './endpoints.ts';
import { EventBodies } from './events.ts';
import { FanOut } from './fanout.ts';
import { DEFAULT_RETRY } from './schedule.ts';
import { throttled } from '../runtime/throttle.ts';

export type WebhookLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/** Bytes of a receiver's answer read at most. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Delivered and failed messages stay in the delivery log this long. */
export const RETENTION_MS = 30 * 86_400_000;

export function webhookEndpoints(input: { store: LedgerStore; config: WebhookConfig; keyring: () => Promise<Keyring>; clock: Clock; resolve?: Resolve }): WebhookEndpoints {
  return new WebhookEndpoints({
    webhooks: input.store.webhooks, clock: input.clock, keyring: input.keyring, allowPrivate: input.config.allowPrivate, resolve: input.resolve,
  });
}

export type DelivererTuning = { pollMs?: number; holdRetryMs?: number; stopGraceMs?: number; giveUpAfterMs?: number; resolve?: Resolve };

/** The webhook deliverer, not yet started. */
export function delivererJob(input: {
  store: LedgerStore; config: WebhookConfig; keyring: () => Promise<Keyring>; baseUrl: string; log: WebhookLog; tuning?: DelivererTuning;
}): Deliverer {
  const { config, tuning = {} } = input;
  return new Deliverer({
    webhooks: input.store.webhooks,
    fanOut: new FanOut(new EventBodies(input.baseUrl), () => new Date()),
    secretOf: (endpoint) => openSecret(input.keyring, endpoint),
    limits: { timeoutMs: config.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, allowPrivate: config.allowPrivate, resolve: tuning.resolve },
    retry: { ...DEFAULT_RETRY, baseMs: config.retryBaseMs, ...(tuning.giveUpAfterMs === undefined ? {} : { giveUpAfterMs: tuning.giveUpAfterMs }) },
    concurrency: config.concurrency,
    pollMs: tuning.pollMs ?? 100,
    holdRetryMs: tuning.holdRetryMs ?? 2_000,
    retentionMs: RETENTION_MS,
    stopGraceMs: tuning.stopGraceMs ?? 2_000,
    onError: throttled((m) => input.log('error', m)),
    onTakeOver: () => input.log('info', 'webhooks: this node delivers webhooks'),
  });
}
