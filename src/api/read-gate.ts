// The read gate: how many public reads run at once, in all and per client (IP), so one reader
// with many connections cannot take the service's time from everyone else, and never from the
// record path (which does not pass through it). A read past a bound waits in a short queue (at
// most `queue` reads in all, at most `perClient` of one client's, each for at most `waitMs`),
// then is refused with Retry-After: 429 rate_limit_exceeded when its own client's bound held it,
// 503 service_unavailable when the service's did. Every read the gate lets in runs as a public
// read (store/read-scope.ts), so PostgreSQL gives it the read pool, apart from the writes'.
// The bound counts a read from its admission until its response closes (a streamed body
// included), so a slow-reading client keeps its slot busy, not somebody else's. A read starts
// only after the event loop has polled for I/O (setImmediate): the writes that arrived meanwhile
// are taken up before it. Its start is not paced (a page's few small reads must not queue into a
// 429); the slices of a long read are (runtime/loop-share.ts).
// A refusal is not sent before `refusalDelayMs` from the read's arrival (the tarpit, tarpit.ts),
// so a client that floods with many connections costs one refusal per connection per delay.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { ReadBounds } from '../config.ts';
import { errors, type LedgerError } from '../domain/errors.ts';
import { runAsPublicRead } from '../runtime/read-scope.ts';
import { ApiError } from './errors.ts';
import { refuseSlowly, Tarpit } from './tarpit.ts';

/**
 * Route config of a read that costs next to nothing (a static asset served from memory): it takes
 * no turn, so one page's scripts, styles and images never queue behind, or get refused with, the
 * page's own data reads. It stays under the per-minute read limit.
 */
export const CHEAP_READ = { cheapRead: true } as const;

/** Seconds a refused reader is told to wait: a turn frees up as soon as any read ends. */
export const READ_RETRY_AFTER_S = 1;

export type GateLimits = Pick<ReadBounds, 'concurrency' | 'perClient' | 'queue' | 'waitMs' | 'refusalDelayMs' | 'refusalsHeld'>;

/** Which bound refused a read: its client's (429) or the service's (503). */
export type Refusal = 'client' | 'global';

type Client = { running: number; waiting: number };
type Waiter = { key: string; client: Client; admit: () => void; timer: NodeJS.Timeout };

export class ReadGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly clients = new Map<string, Client>();
  /** Reads refused so far, by the bound that refused them. */
  readonly refused: Record<Refusal, number> = { client: 0, global: 0 };
  /** Where refusals wait before they are sent: the gate's own and the per-minute limit's. */
  readonly tarpit: Tarpit;

  constructor(readonly limits: GateLimits) {
    this.tarpit = new Tarpit({ delayMs: limits.refusalDelayMs, max: limits.refusalsHeld });
  }

  /** Reads running and reads waiting for a turn, now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /**
   * A turn for a read of `key` (the client): resolves with the function that ends the turn
   * (call it once, when the response is closed), or with the bound that refused it.
   */
  enter(key: string): Promise<{ ok: true; leave: () => void } | { ok: false; refusal: Refusal }> {
    const client = this.clientOf(key);
    if (this.hasRoom(client)) {
      const leave = this.start(key, client);
      return new Promise((resolve) => setImmediate(() => resolve({ ok: true, leave })));
    }
    if (client.waiting >= this.limits.perClient || this.waiting.length >= this.limits.queue || this.limits.waitMs === 0) {
      return Promise.resolve({ ok: false, refusal: this.refuse(key, client) });
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        key, client,
        admit: () => {
          const leave = this.start(key, client);
          setImmediate(() => resolve({ ok: true, leave }));
        },
        timer: setTimeout(() => {
          this.dequeue(waiter);
          resolve({ ok: false, refusal: this.refuse(key, client) });
        }, this.limits.waitMs),
      };
      client.waiting++;
      this.waiting.push(waiter);
    });
  }

  private hasRoom(client: Client): boolean {
    return client.running < this.limits.perClient && this.running < this.limits.concurrency;
  }

  private clientOf(key: string): Client {
    let client = this.clients.get(key);
    if (!client) this.clients.set(key, (client = { running: 0, waiting: 0 }));
    return client;
  }

  /** Counts a refusal under the bound that holds this client now, and forgets an idle client. */
  private refuse(key: string, client: Client): Refusal {
    const refusal: Refusal = client.running >= this.limits.perClient ? 'client' : 'global';
    this.refused[refusal]++;
    this.forgetIfIdle(key, client);
    return refusal;
  }

  private start(key: string, client: Client): () => void {
    this.running++;
    client.running++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      client.running--;
      this.forgetIfIdle(key, client);
      this.admitWaiting();
    };
  }

  /** Lets in the longest-waiting reads whose clients have room, while the service has. */
  private admitWaiting(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.limits.concurrency;) {
      const waiter = this.waiting[i]!;
      if (waiter.client.running >= this.limits.perClient) {
        i++;
        continue;
      }
      this.dequeue(waiter);
      waiter.admit();
    }
  }

  private dequeue(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const at = this.waiting.indexOf(waiter);
    if (at >= 0) this.waiting.splice(at, 1);
    waiter.client.waiting--;
  }

  private forgetIfIdle(key: string, client: Client): void {
    if (client.running === 0 && client.waiting === 0) this.clients.delete(key);
  }
}

function refusalError(refusal: Refusal, limits: GateLimits): LedgerError {
  return refusal === 'client'
    ? errors.rateLimitExceeded(`too many requests at once: at most ${limits.perClient} public reads at a time per client; retry in ${READ_RETRY_AFTER_S} second`)
    : errors.serviceUnavailable(`too many public reads at once (at most ${limits.concurrency}); retry in ${READ_RETRY_AFTER_S} second`);
}

/**
 * The hooks that put a plugin context's routes behind the gate: a turn per request (released
 * when the response closes, however it ends), then the rest of the request runs as a public read.
 */
export function readGateHooks(gate: ReadGate): onRequestHookHandler[] {
  const take = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method === 'OPTIONS') return; // a CORS preflight reads nothing
    if ((request.routeOptions.config as { cheapRead?: boolean }).cheapRead) return;
    const turn = await gate.enter(request.ip);
    if (!turn.ok) {
      reply.header('retry-after', String(READ_RETRY_AFTER_S));
      return refuseSlowly(gate.tarpit, request, reply, new ApiError(refusalError(turn.refusal, gate.limits)));
    }
    if (reply.raw.closed || reply.raw.destroyed || request.raw.destroyed) return turn.leave();
    reply.raw.once('close', turn.leave);
  };
  const scope: onRequestHookHandler = (_request, _reply, done) => runAsPublicRead(() => done());
  return [take as onRequestHookHandler, scope];
}
