// The witness's HTTP server (node:http, no framework: two routes, byte-exact bodies). Owns the
// routes under the prefix, the request-body bound (a larger body is refused with 400 and its
// connection closed, the rest unread), and starting/stopping: `startWitness` opens the key, the
// log list and the state.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyRaw } from '../core/ed25519.ts';
import { addCheckpoint, latestCheckpoint, MAX_REQUEST_BYTES, originsByHash, type Witness, type WitnessAnswer } from './add-checkpoint.ts';
import { loadWitnessKey, type WitnessKey } from './key.ts';
import { parseLogList } from './log-list.ts';
import { SqliteWitnessState } from './sqlite-state.ts';

export const WITNESS_DB_FILE_NAME = 'witness.db';

export type WitnessOptions = { logsFile: string; dataDir: string; port: number; host: string; name: string; prefix: string };

export type RunningWitness = {
  key: WitnessKey;
  keyPath: string;
  keyCreated: boolean;
  looseKeyMode: boolean;
  logCount: number;
  url: string;
  stop: () => Promise<void>;
};

function send(res: ServerResponse, answer: WitnessAnswer, extra: Record<string, string> = {}): void {
  res.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store', ...extra });
  res.end(answer.body);
}

/**
 * The body, or null once it passes the bound: declared or read, the rest is left unread (the
 * caller answers 400 and closes the connection), so an endless body costs the bound, not its length.
 */
function readBody(req: IncomingMessage): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_REQUEST_BYTES) return resolve(null);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= MAX_REQUEST_BYTES) return void chunks.push(c);
      req.off('data', onData);
      req.pause();
      resolve(null);
    };
    req.on('data', onData);
    req.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    req.on('error', reject);
  });
}

/** Answers 400 to a body over the bound and closes the connection once the answer is written, unread. */
function refuseOversized(req: IncomingMessage, res: ServerResponse): void {
  res.on('finish', () => req.socket.destroy());
  send(res, plain(400, `request body is over ${MAX_REQUEST_BYTES} bytes`), { connection: 'close' });
}

const plain = (status: number, body: string): WitnessAnswer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${body}\n` });

export function witnessHandler(w: Witness, prefix: string) {
  const monitoring = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([0-9a-f]{64})/checkpoint$`);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === `${prefix}/add-checkpoint`) {
      if (req.method !== 'POST') return send(res, plain(405, 'use POST'), { allow: 'POST' });
      const body = await readBody(req);
      if (body === null) return refuseOversized(req, res);
      return send(res, addCheckpoint(w, body));
    }
    const m = monitoring.exec(path);
    if (m) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, plain(405, 'use GET'), { allow: 'GET, HEAD' });
      return send(res, latestCheckpoint(w, m[1]!));
    }
    send(res, plain(404, 'not found'));
  };
}

/** Opens the key (creating it on first start), the log list and the state, and listens. */
export async function startWitness(opts: WitnessOptions): Promise<RunningWitness> {
  const list = parseLogList(await readFile(opts.logsFile, 'utf8'));
  if (!list.ok) throw new Error(`the log list ${opts.logsFile}: ${list.error}`);
  const loaded = await loadWitnessKey(opts.dataDir, opts.name);
  if (!loaded.ok) throw new Error(loaded.error);
  const state = new SqliteWitnessState(join(opts.dataDir, WITNESS_DB_FILE_NAME));
  const w: Witness = {
    logs: list.value,
    key: loaded.value.key,
    state,
    verify: verifyRaw,
    now: () => Date.now() / 1000,
    originsByHash: originsByHash(list.value),
  };
  const handler = witnessHandler(w, opts.prefix);
  const server: Server = createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) send(res, plain(500, 'internal error'));
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    key: loaded.value.key,
    keyPath: loaded.value.path,
    keyCreated: loaded.value.created,
    looseKeyMode: loaded.value.looseMode,
    logCount: list.value.size,
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}${opts.prefix}`,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => {
        state.close();
        resolve();
      });
      server.closeAllConnections();
    }),
  };
}
