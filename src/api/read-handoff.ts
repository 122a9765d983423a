// Handing public reads to another thread. A public read admitted by the rate limit and the read
// gate on this (the record path's) event loop is answered, headers and body, by a read thread
// (src/read-threads.ts): its rows, JSON, pages and compression cost that thread's time and heap,
// and this loop only moves the finished bytes to the socket. The read thread runs the same app
// (same routes, same headers), told by a header which request id to use, so a response carries
// the id this node logs. Where no read thread can take a read, it is answered here, as before.
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The header that tells a read thread's app the request id to use; set only by this node. */
export const HANDED_REQUEST_ID = 'x-ledger-handed-request-id';

export type HandedRead = { method: 'GET' | 'HEAD'; url: string; headers: IncomingHttpHeaders; ip: string };

/** A read thread's answer: its status and headers, then its body in chunks, as the socket takes them. */
export type HandedAnswer = { status: number; headers: OutgoingHttpHeaders; body: AsyncIterable<Uint8Array>; cancel: () => void };

/** Where public reads are answered off this loop. */
export type ReadHandoff = {
  /** Null: no read thread can take it now (answer it here). */
  answer(read: HandedRead): Promise<HandedAnswer | null>;
  /** Threads configured and answering now, and reads handed to them so far (/metrics). */
  readonly state: { threads: number; ready: number; answered: number };
};

/** Headers of one hop, never copied from the read thread's answer to the client's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

/** The onRequest hook, last of a read's: hands the read over, and sends what comes back. */
export function handOffReads(handoff: ReadHandoff) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    if ((request.routeOptions.config as { cheapRead?: boolean }).cheapRead) return;
    const headers = { ...request.headers, [HANDED_REQUEST_ID]: request.id };
    const answer = await handoff.answer({ method: request.method, url: request.url, headers, ip: request.ip });
    if (!answer) return;
    reply.hijack();
    await send(answer, reply.getHeaders(), reply.raw);
  };
}

async function send(answer: HandedAnswer, ours: Record<string, string | number | string[] | undefined>, raw: ServerResponse): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
  Object.assign(headers, ours);
  const gone = () => answer.cancel();
  raw.once('close', gone);
  try {
    raw.writeHead(answer.status, headers);
    for await (const chunk of answer.body) {
      if (raw.destroyed) return;
      if (!raw.write(chunk)) await drained(raw);
    }
    raw.end();
  } catch {
    raw.destroy(); // the read thread failed after the headers went out: the client sees a cut body
  } finally {
    raw.off('close', gone);
    answer.cancel(); // nothing, once the body was read to its end
  }
}

function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}
