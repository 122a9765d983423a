// The published documents the verifier reads, and reading them over HTTP: an export (NDJSON,
// streamed line by line, so an export of any size is never held whole), a chain (followed page
// by page) or a proof bundle, from a URL or as an already parsed document. Pure (fetch and
// Uint8Array only): the client (src/client) uses it in a browser; sources.ts adds files.
import { isObject, nestedDeeperThan } from '../core/json.ts';
import { MAX_JSON_NESTING } from './bounds.ts';


/** The input cannot be verified at all (missing, not JSON, not a format we know): exit 2. */
export class UnusableInput extends Error {}

export type PublishedKey = { id: string; public_key: string; revoked_at: string | null };
export type PublishedHead = { seq: number; chain_hash: string; recorded_at: string | null };

export type ExportHeader = {
  object: 'export';
  format: string;
  agent: { handle: string };
  keys: PublishedKey[];
  head: PublishedHead;
  records: number;
};

export type ChainPage = {
  object: 'chain';
  agent: string;
  head: PublishedHead;
  keys: PublishedKey[];
  after_seq: number;
  payloads?: boolean;
  records: unknown[];
  has_more: boolean;
  next_after_seq: number | null;
};

export type ProofBundle = {
  object: 'proof';
  id: string;
  agent: { handle: string; head: PublishedHead };
  key: (PublishedKey & { status?: string }) | null;
  inclusion_proof: unknown;
  anchor_proof: unknown;
  record: unknown;
};

export type Line = { text: string; line: number };

export type Source =
  | { kind: 'export'; origin: string; header: ExportHeader; blocks: AsyncIterable<Block> }
  | { kind: 'chain'; origin: string; pages: AsyncIterable<ChainPage>; first: ChainPage }
  | { kind: 'proof'; origin: string; bundle: ProofBundle };


/** Whole NDJSON lines as raw bytes (the last may lack its newline); `firstLine` numbers them. */
export type Block = { bytes: Uint8Array; firstLine: number; lines: number };

/**
 * The first line of a byte stream (decoded, without its line end), and the bytes after it. Only
 * as much as the first line needs is read.
 */
export async function splitFirstLine(chunks: AsyncIterable<Uint8Array>): Promise<{ first: string | null; rest: AsyncGenerator<Uint8Array> }> {
  const it = chunks[Symbol.asyncIterator]();
  const parts: Uint8Array[] = [];
  for (;;) {
    const next = await it.next();
    if (next.done) {
      const all = concat(parts);
      return { first: all.length > 0 ? stripCr(utf8.decode(all)) : null, rest: (async function* () {})() };
    }
    const chunk = next.value;
    const nl = chunk.indexOf(10);
    if (nl < 0) {
      parts.push(chunk);
      continue;
    }
    parts.push(chunk.subarray(0, nl));
    const leftover = chunk.subarray(nl + 1);
    const first = stripCr(utf8.decode(concat(parts)));
    async function* rest(): AsyncGenerator<Uint8Array> {
      if (leftover.length > 0) yield leftover;
      for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
    }
    return { first, rest: rest() };
  }
}

const utf8 = new TextDecoder('utf-8');

/** The parts copied into one new array that owns its whole buffer (so a worker can take it over). */
function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const stripCr = (s: string) => (s.endsWith('\r') ? s.slice(0, -1) : s);

/**
 * Cuts a byte stream into blocks of `linesPerBlock` whole lines (fewer when they reach
 * EXPORT_BLOCK_BYTES) without decoding it: verify workers decode and parse the blocks, so the
 * reading thread only looks for newlines.
 */
export async function* lineBlocks(chunks: AsyncIterable<Uint8Array>, linesPerBlock: number, firstLine: number): AsyncGenerator<Block> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let count = 0;
  let line = firstLine;
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
      if (++count === linesPerBlock || pendingBytes + nl - start >= EXPORT_BLOCK_BYTES) {
        pending.push(chunk.subarray(start, nl + 1));
        yield { bytes: concat(pending), firstLine: line, lines: count };
        line += count;
        pending = [];
        pendingBytes = 0;
        count = 0;
        start = nl + 1;
      }
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
    }
  }
  const tail = concat(pending);
  if (tail.length > 0) yield { bytes: tail, firstLine: line, lines: count + (tail[tail.length - 1] === 10 ? 0 : 1) };
}

/** Splits a byte stream into lines (LF or CRLF), decoding UTF-8 across chunk boundaries. */
export async function* readLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let rest = '';
  let n = 0;
  for await (const chunk of chunks) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    const parts = text.split('\n');
    rest = parts.pop()!;
    for (const p of parts) yield { text: p.endsWith('\r') ? p.slice(0, -1) : p, line: ++n };
  }
  rest += decoder.decode();
  if (rest !== '') yield { text: rest, line: ++n };
}

export function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/** Records per block handed to a verify worker. */
export const EXPORT_BLOCK_LINES = 2000;
/** Or fewer, when their bytes reach this: the blocks queued for the workers stay bounded in memory. */
export const EXPORT_BLOCK_BYTES = 8 * 1024 * 1024;

/** An NDJSON source's first line parsed (undefined when not JSON); nested too deep, unusable. */
export function firstLineValue(first: string, origin: string): unknown {
  if (nestedDeeperThan(first, MAX_JSON_NESTING)) throw new UnusableInput(`${origin} nests JSON deeper than ${MAX_JSON_NESTING} levels`);
  return tryParse(first);
}

export function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function parseDocument(text: string, origin: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_NESTING)) throw new UnusableInput(`${origin} nests JSON deeper than ${MAX_JSON_NESTING} levels`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UnusableInput(`${origin} is neither an NDJSON export nor a JSON document: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// URLs

async function get(url: string, fetcher: typeof fetch): Promise<Response> {
  let response: Response;
  try {
    response = await fetcher(url, { headers: { accept: 'application/x-ndjson, application/json' } });
  } catch (e) {
    throw new UnusableInput(`cannot fetch ${url}: ${(e as Error).message}`);
  }
  if (response.status !== 200) {
    const body = await response.text().catch(() => '');
    const error = tryParse(body);
    const message = isObject(error) && isObject(error.error) ? `${String(error.error.code)}: ${String(error.error.message)}` : body.slice(0, 200);
    throw new UnusableInput(`${url} answered ${response.status}${message ? ` (${message})` : ''}`);
  }
  return response;
}

export async function openUrl(url: string, fetcher: typeof fetch): Promise<Source> {
  const response = await get(url, fetcher);
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('ndjson')) {
    if (!response.body) throw new UnusableInput(`${url} sent no body`);
    return openExport(streamChunks(response.body), url);
  }
  const document = parseDocument(await response.text(), url);
  return fromDocument(document, url, (after) => fetchPage(url, after, fetcher));
}

/** An export from its bytes (NDJSON: the header line, then one record per line), read as they come. */
export async function openExport(chunks: AsyncIterable<Uint8Array>, origin: string): Promise<Source> {
  const { first, rest } = await splitFirstLine(chunks);
  const header = first === null ? undefined : firstLineValue(first, origin);
  if (!isObject(header) || header.object !== 'export') throw new UnusableInput(`${origin} is NDJSON but does not start with an export header`);
  return { kind: 'export', origin, header: checkHeader(header, origin), blocks: lineBlocks(rest, EXPORT_BLOCK_LINES, 2) };
}

/** A web stream's chunks (browsers' ReadableStream is not always async-iterable). */
export async function* streamChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

async function fetchPage(url: string, afterSeq: number, fetcher: typeof fetch): Promise<ChainPage> {
  const u = new URL(url);
  u.searchParams.set('after_seq', String(afterSeq));
  const document = parseDocument(await (await get(u.toString(), fetcher)).text(), u.toString());
  if (!isObject(document) || document.object !== 'chain') throw new UnusableInput(`${u} is not a chain page`);
  return checkPage(document, u.toString());
}

// ---------------------------------------------------------------------------------------------
// Documents

export function fromDocument(document: unknown, origin: string, nextPage: ((afterSeq: number) => Promise<ChainPage>) | null): Source {
  if (!isObject(document)) throw new UnusableInput(`${origin} is not a JSON object`);
  if (document.object === 'proof') return { kind: 'proof', origin, bundle: checkProof(document, origin) };
  if (document.object === 'chain') {
    const first = checkPage(document, origin);
    return { kind: 'chain', origin, first, pages: walkPages(first, nextPage) };
  }
  throw new UnusableInput(`${origin} is not an export, a chain page or a proof bundle (object is ${JSON.stringify(document.object)})`);
}

async function* walkPages(first: ChainPage, nextPage: ((afterSeq: number) => Promise<ChainPage>) | null): AsyncGenerator<ChainPage> {
  let page = first;
  yield page;
  while (nextPage && page.has_more && page.next_after_seq !== null) {
    const after = page.next_after_seq;
    page = await nextPage(after);
    if (page.after_seq !== after) throw new UnusableInput(`the page after seq ${after} says it starts after seq ${page.after_seq}`);
    yield page;
  }
}

function need(ok: boolean, origin: string, what: string): void {
  if (!ok) throw new UnusableInput(`${origin}: ${what}`);
}

function checkHead(v: unknown, origin: string): PublishedHead {
  need(isObject(v) && Number.isSafeInteger(v.seq) && typeof v.chain_hash === 'string', origin, 'head must be {seq, chain_hash, recorded_at}');
  return v as PublishedHead;
}

function checkKeys(v: unknown, origin: string): PublishedKey[] {
  need(Array.isArray(v) && v.every((k) => isObject(k) && typeof k.id === 'string' && typeof k.public_key === 'string'), origin, 'keys must be a list of {id, public_key, revoked_at}');
  return (v as PublishedKey[]).map((k) => ({ id: k.id, public_key: k.public_key, revoked_at: k.revoked_at ?? null }));
}

export function checkHeader(h: Record<string, unknown>, origin: string): ExportHeader {
  need(h.canonicalisation === 'canon_v1' && h.algorithm === 'sha256', origin, 'the export is not canon_v1 / sha256');
  need(isObject(h.agent) && typeof h.agent.handle === 'string', origin, 'the export header names no agent');
  need(Number.isSafeInteger(h.records), origin, 'the export header has no record count');
  return { ...(h as unknown as ExportHeader), keys: checkKeys(h.keys, origin), head: checkHead(h.head, origin) };
}

function checkPage(p: Record<string, unknown>, origin: string): ChainPage {
  need(p.canonicalisation === 'canon_v1' && p.algorithm === 'sha256', origin, 'the chain is not canon_v1 / sha256');
  need(typeof p.agent === 'string', origin, 'the chain page names no agent');
  need(Array.isArray(p.records), origin, 'the chain page has no records list');
  need(Number.isSafeInteger(p.after_seq), origin, 'the chain page has no after_seq');
  return { ...(p as unknown as ChainPage), keys: checkKeys(p.keys, origin), head: checkHead(p.head, origin) };
}

function checkProof(p: Record<string, unknown>, origin: string): ProofBundle {
  need(p.canonicalisation === 'canon_v1' && p.algorithm === 'sha256', origin, 'the proof is not canon_v1 / sha256');
  need(isObject(p.agent) && typeof p.agent.handle === 'string', origin, 'the proof names no agent');
  const agent = p.agent as Record<string, unknown>;
  const key = p.key === null || p.key === undefined ? null : checkKeys([p.key], origin)[0]!;
  return { ...(p as unknown as ProofBundle), agent: { handle: String(agent.handle), head: checkHead(agent.head, origin) }, key };
}
