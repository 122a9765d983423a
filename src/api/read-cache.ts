// The read cache: while public reads queue for their turns (the read gate is busy), a read is
// answered with a copy of the same answer made moments before, as a shared HTTP cache in front of
// the service may (RFC 9111 §3, §4.2): only a whole 200 whose Cache-Control is `public, max-age=N`,
// for at most N seconds, and never across a write: a write by an agent drops the copies of that
// agent's reads and of every read that is not one agent's (a write without an agent, all of them).
// A copy is compressed once (br, gzip) on the thread pool, the answer that made it included, and
// sent as each client accepts, so a repeated read costs no store query, no rendering and no
// compression on the event loop that the writes share. The copies are bounded in bytes (the oldest
// go first). Quiet, the cache answers nothing and keeps nothing: every read is answered afresh.
// Off unless LEDGER_READ_CACHE_MB gives it a size (docs/operations.md says why).
import { brotliCompress, constants, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import { pickEncoding } from '../site/api-reference.ts';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Response headers a copy carries; the rest (Request-Id, RateLimit-*, CORS, Date) are each answer's own. */
const KEPT_HEADERS = ['content-type', 'cache-control', 'etag', 'link', 'content-disposition', 'content-security-policy', 'referrer-policy'] as const;

/**
 * Which writes a read has seen: its scope's generation and the cache's epoch when the read began. A
 * copy is only as new as the read that made it, so a write acknowledged while that read ran leaves
 * the copy stale from the start.
 */
export type Seen = { scope: string; generation: number; epoch: number };

export type Copy = {
  key: string;
  seen: Seen;
  expiresAt: number;
  headers: Partial<Record<(typeof KEPT_HEADERS)[number], string>>;
  body: Buffer;
  encoded: { br?: Buffer; gzip?: Buffer };
  /** Settles once `encoded` holds what compressing gave (nothing for a body not worth it). */
  compressed: Promise<void>;
  bytes: number;
};

export type ReadCacheOptions = {
  /** Bytes of copies kept at most, compressed variants included; 0 turns the cache off. */
  maxBytes: number;
  /** Whether public reads are queueing now (the read gate's load). */
  busy: () => boolean;
  now?: () => number;
};

/** One copy takes at most this share of the bound. */
const MAX_SHARE_OF_ONE = 4;

/** Once busy, the cache answers for this long after the last sign of load (its hits take no turns). */
const BUSY_HOLD_MS = 5_000;

/** The scope a copy is dropped with: the agent whose records it shows, or every write's. */
const GLOBAL = '';

export class ReadCache {
  private readonly copies = new Map<string, Copy>();
  private readonly generations = new Map<string, number>();
  /** One more at each write without an agent: every copy made before it is stale. */
  private epoch = 0;
  private bytes = 0;
  private busyUntil = 0;
  private readonly now: () => number;
  /** Answers from a copy, and copies made, since the start. */
  readonly counts = { hits: 0, stored: 0 };

  constructor(private readonly options: ReadCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Copies kept now, and their bytes (compressed variants included). */
  get size(): { copies: number; bytes: number } {
    return { copies: this.copies.size, bytes: this.bytes };
  }

  /** True while the cache answers: reads queued now, or did within BUSY_HOLD_MS. */
  active(): boolean {
    if (this.options.maxBytes === 0) return false;
    const now = this.now();
    if (this.options.busy()) this.busyUntil = now + BUSY_HOLD_MS;
    return now < this.busyUntil;
  }

  /** A write was acknowledged: the copies of its agent's reads (handle) and the global ones go; null: all go. */
  wrote(handle: string | null): void {
    if (handle === null) {
      this.epoch++;
      return this.clear();
    }
    this.bump(scopeName(handle));
    this.bump(GLOBAL);
  }

  /** The writes a read of `path` beginning now has seen. */
  seenBy(path: string): Seen {
    const scope = scopeOf(path);
    return { scope, generation: this.generationOf(scope), epoch: this.epoch };
  }

  get(key: string): Copy | null {
    const copy = this.copies.get(key);
    if (!copy) return null;
    if (copy.expiresAt <= this.now() || !this.current(copy.seen)) {
      this.drop(copy);
      return null;
    }
    this.counts.hits++;
    return copy;
  }

  /**
   * Keeps a copy of a 200 made by a read that began having `seen` these writes, for as long as its
   * Cache-Control lets a shared cache (null: not kept), and compresses it when `compress`.
   */
  put(key: string, seen: Seen, headers: Copy['headers'], body: Buffer, compress = false): Copy | null {
    const maxAge = sharedMaxAgeS(headers['cache-control']);
    if (maxAge === null || body.length > this.options.maxBytes / MAX_SHARE_OF_ONE || !this.current(seen)) return null;
    const copy: Copy = {
      key, seen, expiresAt: this.now() + maxAge * 1000, headers, body, encoded: {}, compressed: Promise.resolve(), bytes: body.length,
    };
    const old = this.copies.get(key);
    if (old) this.drop(old);
    this.copies.set(key, copy);
    this.bytes += copy.bytes;
    this.counts.stored++;
    this.evict();
    if (compress) copy.compressed = this.compress(copy);
    return copy;
  }

  private async compress(copy: Copy): Promise<void> {
    const [br, gz] = await Promise.all([
      brotli(copy.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: copy.bytes } }).catch(() => null),
      gzipped(copy.body).catch(() => null),
    ]);
    for (const [encoding, bytes] of [['br', br], ['gzip', gz]] as const) {
      if (bytes && bytes.length < copy.bytes * 0.9) copy.encoded[encoding] = bytes; // else hardly compressible: sent as it is
    }
    if (this.copies.get(copy.key) !== copy) return;
    const added = (copy.encoded.br?.length ?? 0) + (copy.encoded.gzip?.length ?? 0);
    copy.bytes += added;
    this.bytes += added;
    this.evict();
  }

  private evict(): void {
    for (const oldest of this.copies.values()) {
      if (this.bytes <= this.options.maxBytes) return;
      this.drop(oldest);
    }
  }

  private drop(copy: Copy): void {
    if (this.copies.get(copy.key) !== copy) return;
    this.copies.delete(copy.key);
    this.bytes -= copy.bytes;
  }

  private clear(): void {
    this.copies.clear();
    this.bytes = 0;
  }

  private current(seen: Seen): boolean {
    return seen.epoch === this.epoch && seen.generation === this.generationOf(seen.scope);
  }

  private generationOf(scope: string): number {
    return this.generations.get(scope) ?? 0;
  }

  private bump(scope: string): void {
    this.generations.set(scope, this.generationOf(scope) + 1);
  }
}

/** N of `public, max-age=N` when a shared cache may keep the answer that long; null otherwise. */
export function sharedMaxAgeS(cacheControl: string | undefined): number | null {
  if (!cacheControl) return null;
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim());
  if (!directives.includes('public') || directives.some((d) => /^(no-cache|no-store|private|s-maxage=0)$/.test(d))) return null;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((n) => n !== undefined);
  return maxAge === undefined || Number(maxAge) === 0 ? null : Number(maxAge);
}

/**
 * The agent whose records a public path shows (by handle, as the path names it), or GLOBAL: the
 * site's and the API's reads of one agent, its badge, its export and its ledger filter.
 */
export function scopeOf(url: string): string {
  const [path = '', query = ''] = url.split('?', 2);
  const inPath = /^\/(?:v1\/agents|agents|badge)\/([^/.?]+)/.exec(path)?.[1];
  if (inPath) return scopeName(decodeSafely(inPath));
  const agent = /^\/v1\/(?:export|ledger)$/.test(path) ? new URLSearchParams(query).get('agent') : null;
  return agent ? scopeName(agent) : GLOBAL;
}

const scopeName = (handle: string) => `agent:${handle.toLowerCase()}`;

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The copy's body in the encoding the request takes best (api-reference.ts's choice), with the headers that say so. */
function encoded(request: FastifyRequest, reply: FastifyReply, copy: Copy): Buffer {
  const encoding = pickEncoding(request.headers['accept-encoding']);
  const bytes = encoding === 'identity' ? undefined : copy.encoded[encoding];
  if (!bytes) return copy.body;
  reply.header('content-encoding', encoding).header('vary', 'accept-encoding');
  return bytes;
}

/** What varies a public read's answer: its URL and what the request accepts. */
function keyOf(request: FastifyRequest): string {
  return `${request.url}\n${request.headers.accept ?? ''}`;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Answered from a copy ('sent'), or to be kept as one, with the writes its read has seen. */
    readCopy?: 'sent' | Seen;
  }
}

/** Which answers are worth compressing: those the context's compression would compress. */
export type Compressible = { types: RegExp; minBytes: number };

/**
 * The hooks of a plugin context's public reads: `answer` (an onRequest hook, after the rate limit,
 * before the read gate: a copy takes no turn) and `keep` (an onSend hook, after the ETag is set).
 */
export function readCacheHooks(cache: ReadCache, compressible: Compressible): { answer: onRequestHookHandler; keep: onSendHookHandler } {
  const answer = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (request.method !== 'GET' || !cache.active()) return undefined;
    const copy = cache.get(keyOf(request));
    if (!copy) {
      request.readCopy = cache.seenBy(request.url);
      return undefined;
    }
    request.readCopy = 'sent';
    return reply.headers(copy.headers).send(encoded(request, reply, copy));
  };
  // The answer that makes a copy is sent as its copies will be: turned into bytes once, and
  // compressed once, on the thread pool (then the compression plugin lets it pass).
  const keep = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const seen = request.readCopy;
    if (seen === undefined || seen === 'sent' || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const headers: Copy['headers'] = {};
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name);
      if (typeof value === 'string') headers[name] = value;
    }
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const compress = compressible.types.test(headers['content-type'] ?? '') && body.length >= compressible.minBytes;
    const copy = cache.put(keyOf(request), seen, headers, body, compress);
    if (!copy) return body;
    await copy.compressed;
    return encoded(request, reply, copy);
  };
  return { answer: answer as onRequestHookHandler, keep: keep as onSendHookHandler };
}
