// A server written to hang or flood a verifier (the third security probe): the first path segment
// picks the behaviour, the second names the run (the times of its first request and of its last
// connection closed are kept, so a test can time how long a verifier talked to the server, its
// start-up and exit left out), the rest is whatever path
// the verifier asks for (an export, a chain, a proof, the log, an agent's performance), so every
// source kind meets every behaviour. `spawnHostileServer` runs it in a process of its own (its
// floods then never delay the test's own clock); run as a script, it prints its URL and each run's
// first request and last close (`first|closed <run> <Date.now()>`).
//   stall        accepts the request and never answers
//   stall-body   answers the headers, then sends nothing
//   trickle      a JSON body one byte every 100 ms, forever
//   endless-json a JSON body that never ends (an array of zeros)
//   endless-ndjson an NDJSON export: a header line, then short lines forever
//   endless-line an NDJSON export whose second line never ends
//   huge         a JSON document of 96 MiB (over the default 64 MiB held whole), declared
//   deep         a JSON document nested 200,000 deep
//   wrong-type   an HTML page (text/html), and binary for the log's tiles
//   redirect     302 to the same path on another origin (localhost instead of 127.0.0.1)
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const HOSTILE_BEHAVIOURS = ['stall', 'stall-body', 'trickle', 'endless-json', 'endless-ndjson', 'endless-line', 'huge', 'deep', 'wrong-type', 'redirect'] as const;
export type HostileBehaviour = (typeof HOSTILE_BEHAVIOURS)[number];

export type HostileServer = {
  url: string;
  /** Date.now() of the first request of the run `run`, if it made one. */
  firstRequestAt: (run: string) => number | undefined;
  /** Date.now() when the last connection of the run `run` closed, if one did. */
  lastClosedAt: (run: string) => number | undefined;
  close: () => Promise<void>;
};

const EXPORT_HEADER = JSON.stringify({
  object: 'export', format: 'ledger-export-ndjson-v1', canonicalisation: 'canon_v1', algorithm: 'sha256', agent: { handle: 'hostile' }, keys: [],
  head: { seq: 1, chain_hash: '0'.repeat(64), recorded_at: null }, records: 1,
});

/** Writes `chunk` again and again as fast as the client reads, until the connection closes. */
function flood(res: ServerResponse, chunk: Buffer): void {
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

type Times = { first: Map<string, number>; closed: Map<string, number> };
let onEvent: ((event: 'first' | 'closed', run: string, at: number) => void) | undefined;

function handle(req: IncomingMessage, res: ServerResponse, port: number, times: Times): void {
  const [, behaviour, run = '', ...rest] = (req.url ?? '/').split('/');
  if (!times.first.has(run)) {
    times.first.set(run, Date.now());
    onEvent?.('first', run, times.first.get(run)!);
  }
  req.socket.once('close', () => {
    times.closed.set(run, Date.now());
    onEvent?.('closed', run, times.closed.get(run)!);
  });
  switch (behaviour as HostileBehaviour) {
    case 'stall':
      return;
    case 'stall-body':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      return;
    case 'trickle': {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
      res.write('{"object":');
      return;
    }
    case 'endless-json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      return flood(res, Buffer.from('0,'.repeat(32 * 1024)));
    case 'endless-ndjson':
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${EXPORT_HEADER}\n`);
      return flood(res, Buffer.from('{"entry":{},"chain_hash":"","content":""}\n'.repeat(1024)));
    case 'endless-line':
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${EXPORT_HEADER}\n{"entry":"`);
      return flood(res, Buffer.alloc(64 * 1024, 0x61));
    case 'huge': {
      const size = 96 * 1024 * 1024;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(size) });
      let sent = 0;
      const block = Buffer.alloc(1024 * 1024, 0x20);
      const pump = () => {
        while (sent < size && !res.destroyed) {
          sent += block.length;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    case 'deep': {
      const depth = 200_000;
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"object":"proof","canonicalisation":"canon_v1","algorithm":"sha256","x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    }
    case 'wrong-type':
      res.writeHead(200, { 'content-type': rest.includes('tile') || rest.at(-1) === 'checkpoint' ? 'application/octet-stream' : 'text/html' });
      return void res.end(rest.includes('tile') ? Buffer.from([0xff, 0xfe, 0x00, 0x01]) : '<!doctype html><title>not a ledger</title>');
    case 'redirect':
      res.writeHead(302, { location: `http://localhost:${port}${req.url}` });
      return void res.end();
    default:
      res.writeHead(404).end();
  }
}

export async function startHostileServer(): Promise<HostileServer> {
  let port = 0;
  const times: Times = { first: new Map(), closed: new Map() };
  const server: Server = createServer((req, res) => handle(req, res, port, times));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    firstRequestAt: (run) => times.first.get(run),
    lastClosedAt: (run) => times.closed.get(run),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The server in a child process: its URL, and each run's first request as the child saw it. */
export async function spawnHostileServer(): Promise<HostileServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const times: Times = { first: new Map(), closed: new Map() };
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the hostile server exited (${code})`)));
    lines.on('line', (line) => {
      const [word, a, b] = line.split(' ');
      if (word === 'url') resolve(a!);
      if (word === 'first') times.first.set(a!, Number(b));
      if (word === 'closed') times.closed.set(a!, Number(b));
    });
  });
  return {
    url,
    firstRequestAt: (run) => times.first.get(run),
    lastClosedAt: (run) => times.closed.get(run),
    close: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.stdin!.end();
    }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  onEvent = (event, run, at) => process.stdout.write(`${event} ${run} ${at}\n`);
  const server = await startHostileServer();
  process.stdout.write(`url ${server.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
}
