// A local OpenTimestamps calendar (reference/tamper-evidence a.11) on 127.0.0.1, port 0. It has
// `POST /digest` answering as a real calendar does (append a nonce, SHA-256, prepend the 4-byte time,
// append an 8-byte HMAC, PendingAttestation naming itself), `GET /timestamp/<hex>` (404 "Pending
// confirmation in Bitcoin blockchain" until mined, then the path to a BitcoinBlockHeaderAttestation),
// and `mine()`, which commits every pending commitment in one OP_RETURN transaction of a SimChain
// block. `misbehave` makes it answer badly on purpose. Test fixture only.

import { createHmac, createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concatBytes, parseHex, serializeTimestamp, timestampFromOps, toHex, type Op, type Timestamp } from '../../src/method/ots/codec.ts';
import { merklePathOps, opReturnTransaction, type SimBlock, type SimChain } from './bitcoin-chain.ts';

/** oversize: 20 kB more than the answer, streamed without Content-Length; oversize_declared: the same with it */
export type Misbehaviour = 'none' | 'oversize' | 'oversize_declared' | 'malformed' | 'server_error' | 'hang';

export type CalendarSim = {
  url: string;
  /** commitments waiting for a block */
  readonly pending: number;
  misbehave: Misbehaviour;
  requests: Array<{ method: string; path: string; accept: string | undefined }>;
  /** Commits all pending commitments in a new block of the chain; null when nothing is pending. */
  mine(): SimBlock | null;
  close(): Promise<void>;
};

export async function startCalendarSim(chain: SimChain): Promise<CalendarSim> {
  const hmacKey = randomBytes(32);
  const waiting: Uint8Array[] = [];
  const known = new Set<string>();
  const upgrades = new Map<string, Timestamp>();
  const sockets = new Set<import('node:net').Socket>();

  const sim: CalendarSim = {
    url: '',
    get pending() {
      return waiting.length;
    },
    misbehave: 'none',
    requests: [],
    mine,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  function answerDigest(digest: Uint8Array): Uint8Array {
    const nonce = new Uint8Array(randomBytes(16));
    const aggregated = createHash('sha256').update(digest).update(nonce).digest();
    const time = Buffer.alloc(4);
    time.writeUInt32BE(Math.floor(Date.now() / 1000));
    const mac = new Uint8Array(createHmac('sha256', hmacKey).update(time).update(aggregated).digest().subarray(0, 8));
    const commitment = concatBytes(time, aggregated, mac);
    waiting.push(commitment);
    known.add(toHex(commitment));
    const ops: Op[] = [{ kind: 'append', arg: nonce }, { kind: 'sha256' }, { kind: 'prepend', arg: time }, { kind: 'append', arg: mac }];
    const answer = serializeTimestamp(timestampFromOps(ops, { kind: 'pending', uri: sim.url }));
    if (!answer.ok) throw new Error(answer.error.message);
    return answer.value;
  }

  function mine(): SimBlock | null {
    if (waiting.length === 0) return null;
    const batch = waiting.splice(0);
    const { tip, paths } = commitmentTree(batch);
    const tx = opReturnTransaction(tip);
    const block = chain.mine([concatBytes(tx.prefix, tip, tx.suffix)]);
    const toRoot: Op[] = [
      { kind: 'prepend', arg: tx.prefix },
      { kind: 'append', arg: tx.suffix },
      { kind: 'sha256' },
      { kind: 'sha256' },
      ...merklePathOps(block.txids, 1),
    ];
    batch.forEach((commitment, i) => {
      upgrades.set(toHex(commitment), timestampFromOps([...paths[i]!, ...toRoot], { kind: 'bitcoin', height: block.height }));
    });
    return block;
  }

  const server = createServer((req, res) => {
    sim.requests.push({ method: req.method ?? '', path: req.url ?? '', accept: req.headers.accept });
    handle(req, res).catch(() => send(res, 500, 'internal error'));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (sim.misbehave === 'hang') return; // never answers; the client's deadline must end it
    if (sim.misbehave === 'server_error') return send(res, 500, 'calendar unavailable');
    if (req.method === 'POST' && req.url === '/digest') {
      const length = Number(req.headers['content-length']);
      if (!Number.isInteger(length)) return send(res, 400, 'invalid Content-Length');
      if (length > 64) return send(res, 400, 'digest too long');
      const digest = await readBody(req);
      return sendBytes(res, 200, misbehaved(answerDigest(digest)), sim.misbehave !== 'oversize');
    }
    const m = /^\/timestamp\/(.*)$/.exec(req.url ?? '');
    if (req.method === 'GET' && m) {
      const commitment = parseHex(m[1]!);
      if (!commitment) return send(res, 400, 'commitment must be hex');
      const upgrade = upgrades.get(toHex(commitment));
      if (upgrade) {
        const bytes = serializeTimestamp(upgrade);
        if (!bytes.ok) throw new Error(bytes.error.message);
        return sendBytes(res, 200, misbehaved(bytes.value), sim.misbehave !== 'oversize');
      }
      if (known.has(toHex(commitment))) return send(res, 404, 'Pending confirmation in Bitcoin blockchain');
      return send(res, 404, 'Not found');
    }
    send(res, 404, 'Not found');
  }

  function misbehaved(body: Uint8Array): Uint8Array {
    if (sim.misbehave === 'oversize' || sim.misbehave === 'oversize_declared') return concatBytes(body, new Uint8Array(20_000));
    if (sim.misbehave === 'malformed') return concatBytes(body.subarray(0, body.length - 3));
    return body;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sim;
}

/**
 * A merkle tree over the commitments as the calendar builds one: each leaf is SHA-256(commitment),
 * each parent SHA-256(left ‖ right), an odd node carried up. Returns the tip and each leaf's ops to it.
 */
function commitmentTree(commitments: Uint8Array[]): { tip: Uint8Array; paths: Op[][] } {
  const paths: Op[][] = commitments.map(() => [{ kind: 'sha256' }]);
  let level = commitments.map((c, i) => ({ hash: sha256(c), leaves: [i] }));
  while (level.length > 1) {
    const next: typeof level = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i]!;
      const right = level[i + 1];
      if (!right) {
        next.push(left);
        continue;
      }
      for (const leaf of left.leaves) paths[leaf]!.push({ kind: 'append', arg: right.hash }, { kind: 'sha256' });
      for (const leaf of right.leaves) paths[leaf]!.push({ kind: 'prepend', arg: left.hash }, { kind: 'sha256' });
      next.push({ hash: sha256(concatBytes(left.hash, right.hash)), leaves: [...left.leaves, ...right.leaves] });
    }
    level = next;
  }
  return { tip: level[0]!.hash, paths };
}

function sha256(b: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(b).digest());
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain' }).end(text);
}

function sendBytes(res: ServerResponse, status: number, body: Uint8Array, declareLength = true): void {
  const headers: Record<string, string | number> = { 'Content-Type': 'application/octet-stream' };
  if (declareLength) headers['Content-Length'] = body.length;
  res.writeHead(status, headers).end(body);
}
