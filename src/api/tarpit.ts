// Refusals of public reads, answered slowly: a refused read (the read gate's 429 or 503, or the
// per-minute limit's 429) is held until `delayMs` after it arrived, then answered. A client that
// retries at once on every connection (a flood) then gets one refusal per connection per delay,
// instead of as many as the event loop can answer, and the service's time stays with the reads
// it admitted and with the writes. An honest client told `Retry-After` waits that long anyway.
// At most `max` refusals are held at once (a held one costs a timer and an open socket); past
// that, or when its client has gone, a refused read gets no answer: its connection is closed.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type TarpitLimits = { delayMs: number; max: number };

/** After the hold: send the refusal, or close the connection without one. */
export type Release = 'answer' | 'close';

export class Tarpit {
  private count = 0;

  constructor(readonly limits: TarpitLimits) {}

  /** Refusals held now. */
  get held(): number {
    return this.count;
  }

  /**
   * Holds a refusal until `delayMs` after its request arrived (`elapsedMs` ago), or until its
   * response closes (the client went away). 'close' when the tarpit is full or the client has gone.
   */
  async hold(response: ServerResponse, elapsedMs: number): Promise<Release> {
    const wait = this.limits.delayMs - elapsedMs;
    if (wait <= 0) return 'answer';
    if (this.count >= this.limits.max) return 'close';
    this.count++;
    try {
      return await new Promise<Release>((resolve) => {
        const gone = () => {
          clearTimeout(timer);
          resolve('close');
        };
        const timer = setTimeout(() => {
          response.off('close', gone);
          resolve('answer');
        }, wait);
        response.once('close', gone);
      });
    } finally {
      this.count--;
    }
  }
}

/**
 * Refuses a public read with `error` (thrown, so the error handler writes its body) once the
 * tarpit lets it go; when the tarpit closes it instead, the request is dropped with its connection.
 */
export async function refuseSlowly(tarpit: Tarpit, request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<void> {
  if ((await tarpit.hold(reply.raw, reply.elapsedTime)) === 'answer') throw error;
  reply.hijack();
  request.raw.socket?.destroy();
}
