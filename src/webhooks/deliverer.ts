// The deliverer: the one process at a time (port.ts: tryDeliverer) that fans committed
// events out into the outbox (fanout.ts) and sends them. Each endpoint gets its messages one at a
// time, in outbox order (per agent: chain order), so a receiver never sees a later event before
// an earlier one; while the oldest keeps failing, the later ones wait behind it. A failed attempt
// is tried again on the retry schedule (schedule.ts); when the schedule runs out the message fails
// for good and the endpoint is disabled (reason `failing`), its later messages kept, unsent.
// Endpoints are served side by side, up to `concurrency` at once. Every attempt is signed anew
// (Standard Webhooks: same webhook-id, fresh webhook-timestamp) and logged with its outcome.
// At least once: an attempt cut short by a crash or a stop is not logged, and is made again.
import { Webhook } from 'standardwebhooks';
import { SingletonJob } from '../runtime/job-loop.ts';
import type { WebhookEndpoint, WebhookMessage, WebhookSession, WebhookStore } from './port.ts';
import type { FanOut } from './fanout.ts';
import { nextAttemptMs, type RetryPolicy } from './schedule.ts';
import { keepAliveAgents, send, type SendLimits } from './send.ts';

export type DelivererOptions = {
  webhooks: WebhookStore;
  fanOut: FanOut;
  /** The endpoint's `whsec_...` secret; throws when it cannot be opened. */
  secretOf: (endpoint: WebhookEndpoint) => Promise<string>;
  limits: SendLimits;
  retry: RetryPolicy;
  concurrency: number;
  /** Wait between turns when nothing was waiting. */
  pollMs: number;
  /** Wait before trying again for the hold, or after an error. */
  holdRetryMs: number;
  /** How long delivered and failed messages are kept in the delivery log. */
  retentionMs: number;
  /** On stop, how long attempts in flight may finish before they are cut off. */
  stopGraceMs: number;
  now?: () => Date;
  onError?: (message: string) => void;
  onTakeOver?: () => void;
};

const PRUNE_EVERY_MS = 3600_000;
const PRUNE_BATCH = 1000;

export class Deliverer {
  private readonly job: SingletonJob<WebhookSession>;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private failure: Error | null = null;
  private endpoints = new Map<string, WebhookEndpoint>();
  private readonly secrets = new Map<string, string>();
  private lastPrune = 0;
  private readonly now: () => Date;
  private readonly agents = keepAliveAgents();

  constructor(private readonly options: DelivererOptions) {
    this.now = options.now ?? (() => new Date());
    this.job = new SingletonJob({
      take: () => this.takeHold(),
      turn: async (session) => ((await this.turn(session)) ? 0 : this.options.pollMs),
      standbyMs: options.holdRetryMs,
      failed: async (err) => {
        this.options.onError?.(`webhooks: ${err.message}`);
        // The deliveries in flight use the session: they end before it is given back.
        await Promise.all(this.inFlight.values());
        this.failure = null;
        return this.options.holdRetryMs;
      },
    });
  }

  /** Whether this process holds the deliverer now. */
  get holding(): boolean {
    return this.job.held !== null;
  }

  start(): void {
    this.job.start();
  }

  /** Stops taking work, lets attempts in flight finish for a grace period, then cuts them off. */
  async stop(): Promise<void> {
    const settled = async () => {
      await this.job.halt();
      await Promise.all(this.inFlight.values());
    };
    const grace = new Promise<void>((resolve) => setTimeout(resolve, this.options.stopGraceMs).unref());
    await Promise.race([settled(), grace]);
    this.abort.abort();
    await settled();
    this.agents.destroy();
    await this.job.release();
  }

  private async takeHold(): Promise<WebhookSession | null> {
    const session = await this.options.webhooks.tryDeliverer();
    if (session) this.options.onTakeOver?.();
    return session;
  }

  /** One turn: fan out, start due deliveries. Answers whether there is more to do at once. */
  private async turn(session: WebhookSession): Promise<boolean> {
    if (this.failure) throw this.failure;
    const active = await session.activeEndpoints();
    this.endpoints = new Map(active.map((e) => [e.id, e]));
    const read = await this.options.fanOut.step(session, active);
    await this.startDue(session);
    await this.prune(session);
    return read > 0;
  }

  private async startDue(session: WebhookSession): Promise<void> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const due = await session.dueHeads(this.now().toISOString(), free, new Set(this.inFlight.keys()));
    for (const m of due) {
      const endpoint = this.endpoints.get(m.endpointId);
      if (!endpoint) continue;
      const delivery = this.serve(session, endpoint, m)
        .catch((err: Error) => { this.failure ??= err; })
        .finally(() => {
          this.inFlight.delete(m.endpointId);
          this.job.wake();
        });
      this.inFlight.set(m.endpointId, delivery);
    }
  }

  /**
   * Delivers `first`, then the endpoint's next messages while each is delivered and the next is
   * already due: a busy endpoint is served back to back, without a turn of the loop each time.
   */
  private async serve(session: WebhookSession, endpoint: WebhookEndpoint, first: WebhookMessage): Promise<void> {
    for (let m: WebhookMessage | null = first; m !== null;) {
      const delivered = await this.deliver(session, endpoint, m);
      if (!delivered || this.job.stopping || this.endpoints.get(endpoint.id)?.status !== 'active') return;
      m = await session.headOf(endpoint.id);
      if (m && m.nextAttemptAt !== null && m.nextAttemptAt > this.now().toISOString()) return;
    }
  }

  /** One attempt, logged; answers whether it was delivered. */
  private async deliver(session: WebhookSession, endpoint: WebhookEndpoint, m: WebhookMessage): Promise<boolean> {
    const attempt = m.attempts + 1;
    const startedAt = this.now();
    const result = await this.attempt(endpoint, m);
    if (this.abort.signal.aborted) return false; // cut off by a stop: not logged, made again after the restart
    const at = this.now();
    const first = m.firstAttemptAt ? Date.parse(m.firstAttemptAt) : startedAt.getTime();
    const next = result.delivered ? null : nextAttemptMs(this.options.retry, attempt, first, at.getTime());
    await session.recordAttempt(
      { messageId: m.id, endpointId: m.endpointId, attempt, startedAt: startedAt.toISOString(), durationMs: result.durationMs, statusCode: result.statusCode, error: result.error },
      result.delivered ? { status: 'delivered', at: at.toISOString() }
        : next === null ? { status: 'failed', at: at.toISOString(), disableEndpoint: true }
          : { status: 'pending', nextAttemptAt: new Date(next).toISOString() },
    );
    return result.delivered;
  }

  private async attempt(endpoint: WebhookEndpoint, m: WebhookMessage) {
    let secret: string;
    try {
      secret = await this.secretOf(endpoint);
    } catch (err) {
      return { delivered: false, statusCode: null, error: `the endpoint's secret cannot be opened: ${(err as Error).message}`, durationMs: 0 };
    }
    // The signature's time is the wall clock's: receivers check it against theirs.
    const sentAt = new Date();
    const signature = new Webhook(secret).sign(m.id, sentAt, m.payload);
    const headers = { 'webhook-id': m.id, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature };
    return send(endpoint.url, m.payload, headers, { ...this.options.limits, agents: this.agents }, this.abort.signal);
  }

  private async secretOf(endpoint: WebhookEndpoint): Promise<string> {
    const known = this.secrets.get(endpoint.id);
    if (known) return known;
    const secret = await this.options.secretOf(endpoint);
    this.secrets.set(endpoint.id, secret);
    return secret;
  }

  private async prune(session: WebhookSession): Promise<void> {
    const now = this.now().getTime();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await session.prune(new Date(now - this.options.retentionMs).toISOString(), PRUNE_BATCH);
  }
}
