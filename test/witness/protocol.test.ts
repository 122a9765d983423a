// `ledger witness` (src/witness/) against C2SP tlog-witness v1: every status code of add-checkpoint
// (200, 400, 403, 404, 409 with text/x.tlog.size, 422), the reference exchange byte for byte, the
// monitoring GET, the body and proof bounds, and a split view (a second history of the log signed
// by the same key) refused. Runs the real handler and SQLite state in process.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { b64Decode, openCheckpoint, parseCosignerVkey, parseVkey, signCheckpoint, verifyCosignature } from '../../src/core/index.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { ed25519FromSeed } from '../core/log-helpers.ts';
import {
  body, checkpointOf, history, LOG_VKEY, logKey, logList, ORIGIN, post, proofOf, RFC_LEAVES, startTestWitness, value, vectorFile, vectors, witnessKey,
} from './helpers.ts';

const tree = history(RFC_LEAVES);
const witnessVkey = value(parseCosignerVkey(vectors.witness.vkey));

describe('add-checkpoint: the reference exchange', () => {
  let w: Awaited<ReturnType<typeof startTestWitness>>;
  before(async () => { w = await startTestWitness(); });
  after(() => w.stop());

  it('our helpers rebuild the reference checkpoints and proofs exactly', () => {
    assert.equal(checkpointOf(tree, 4), vectors.checkpoint_4);
    assert.equal(checkpointOf(tree, 8), vectors.checkpoint_8);
    assert.deepEqual(proofOf(tree, 4, 8), vectors.proof_4_8);
    assert.deepEqual(proofOf(tree, 6, 8), vectors.proof_6_8);
    assert.equal(witnessKey.vkey, vectors.witness.vkey);
  });

  it('404 on the monitoring GET before anything is cosigned', async () => {
    assert.equal((await fetch(`${w.url}/${vectors.monitoring_suffix}`)).status, 404);
  });

  it('a fresh witness cosigns old 0 with no proof (trust on first use), then the reference request gives the reference response byte for byte', async () => {
    const first = await post(w.url, body(0, [], vectors.checkpoint_4));
    assert.equal(first.status, 200, first.body);
    const res = await post(w.url, vectorFile('add-checkpoint-request.txt'));
    assert.equal(res.status, 200, res.body);
    assert.equal(res.body, vectorFile('add-checkpoint-response.txt'));
  });

  it('the monitoring GET serves the size-8 checkpoint with the log signature and the cosignature, both valid', async () => {
    const res = await fetch(`${w.url}/${vectors.monitoring_suffix}`);
    assert.equal(res.status, 200);
    const note = await res.text();
    assert.equal(note, vectors.checkpoint_8 + vectorFile('add-checkpoint-response.txt'));
    assert.equal(value(verifyCosignature(note, witnessVkey, verifyRaw)).time, vectors.time);
    assert.ok(openCheckpoint(note, value(parseVkey(LOG_VKEY)), verifyRaw).ok);
  });

  it('409 with text/x.tlog.size and the cosigned size when old is stale; 400 when old is above the size', async () => {
    const stale = await post(w.url, vectorFile('add-checkpoint-request.txt'));
    assert.equal(stale.status, 409);
    assert.equal(stale.type, 'text/x.tlog.size');
    assert.equal(stale.body, '8\n');
    const zero = await post(w.url, body(0, [], vectors.checkpoint_8));
    assert.deepEqual([zero.status, zero.body], [409, '8\n']);
    const above = await post(w.url, body(9, [], vectors.checkpoint_8));
    assert.equal(above.status, 400);
  });

  it('the same checkpoint again (old = size, empty proof) is cosigned again', async () => {
    assert.equal((await post(w.url, body(8, [], vectors.checkpoint_8))).status, 200);
  });
});

describe('add-checkpoint: a witness at size 6 (the reference 409 case)', () => {
  it('answers 409 "6" to old 4, then cosigns old 6 with the 6 -> 8 proof', async () => {
    const w = await startTestWitness();
    try {
      assert.equal((await post(w.url, body(0, [], checkpointOf(tree, 6)))).status, 200);
      const res = await post(w.url, vectorFile('add-checkpoint-request.txt'));
      assert.deepEqual([res.status, res.type, res.body], [409, 'text/x.tlog.size', '6\n']);
      const retry = await post(w.url, body(6, vectors.proof_6_8, vectors.checkpoint_8));
      assert.equal(retry.status, 200, retry.body);
      assert.equal(retry.body, vectorFile('add-checkpoint-response.txt'));
    } finally {
      await w.stop();
    }
  });
});

describe('add-checkpoint: refusals', () => {
  let w: Awaited<ReturnType<typeof startTestWitness>>;
  before(async () => {
    w = await startTestWitness();
    assert.equal((await post(w.url, body(0, [], vectors.checkpoint_4))).status, 200);
  });
  after(() => w.stop());

  it('400: malformed bodies', async () => {
    const cases = [
      '',
      'old 4\n',
      `old 04\n${vectors.proof_4_8[0]}\n\n${vectors.checkpoint_8}`,
      `old -1\n\n${vectors.checkpoint_8}`,
      `old 4\nnot-base64\n\n${vectors.checkpoint_8}`,
      `old 4\nAAAA\n\n${vectors.checkpoint_8}`,
      `4\n${vectors.proof_4_8[0]}\n\n${vectors.checkpoint_8}`,
      `old 4\n${vectors.proof_4_8[0]}\n\n${vectors.checkpoint_8.replace('\n\n', '\n')}`,
      `old 4\n${vectors.proof_4_8[0]}\n\n${vectors.checkpoint_8.slice(0, -1)}`,
    ];
    for (const c of cases) assert.equal((await post(w.url, c)).status, 400, JSON.stringify(c));
    assert.equal((await post(w.url, new Uint8Array([0x6f, 0x6c, 0x64, 0x20, 0xff, 0x0a, 0x0a]))).status, 400, 'not UTF-8');
  });

  it('400: more than 63 proof lines, and a body over 16 KiB', async () => {
    const many = Array.from({ length: 64 }, () => vectors.proof_4_8[0]!);
    assert.equal((await post(w.url, body(4, many, vectors.checkpoint_8))).status, 400);
    const huge = body(4, vectors.proof_4_8, vectors.checkpoint_8) + 'x'.repeat(16 * 1024);
    assert.equal((await post(w.url, huge)).status, 400);
  });

  it('404: an origin not in the log list, and unknown paths', async () => {
    const other = history(RFC_LEAVES);
    const res = await post(w.url, body(0, [], checkpointOf(other, 4, undefined, 'other.example/log')));
    assert.equal(res.status, 404);
    assert.equal((await fetch(`${w.url}/nothing`)).status, 404);
    assert.equal((await fetch(`${w.url}/${'0'.repeat(64)}/checkpoint`)).status, 404);
  });

  it('403: signed by another key of the same name, a corrupted log signature, or only a cosignature', async () => {
    const impostor = ed25519FromSeed(new Uint8Array(32).fill(9));
    assert.equal((await post(w.url, body(4, vectors.proof_4_8, checkpointOf(tree, 8, impostor)))).status, 403);
    const cp = vectors.checkpoint_8;
    const sigAt = cp.lastIndexOf(' ') + 1;
    const flipped = cp.slice(0, sigAt + 10) + (cp[sigAt + 10] === 'A' ? 'B' : 'A') + cp.slice(sigAt + 11);
    assert.equal((await post(w.url, body(4, vectors.proof_4_8, flipped))).status, 403);
    const onlyCosig = cp.slice(0, cp.indexOf('\n\n') + 2) + vectorFile('add-checkpoint-response.txt');
    assert.equal((await post(w.url, body(4, vectors.proof_4_8, onlyCosig))).status, 403);
  });

  it('422: a bad consistency proof, a proof with old 0, a size-0 root that is not the empty root, equal sizes with another root', async () => {
    const zeroed = 'A'.repeat(43) + '=';
    assert.equal((await post(w.url, body(4, [zeroed], vectors.checkpoint_8))).status, 422);
    assert.equal((await post(w.url, body(4, [], vectors.checkpoint_8))).status, 422);
    const fork = history([...RFC_LEAVES.slice(0, 3), new Uint8Array([1, 2, 3])]);
    assert.equal((await post(w.url, body(4, [], checkpointOf(fork, 4)))).status, 422, 'same size, another root');
    const fresh = await startTestWitness();
    try {
      assert.equal((await post(fresh.url, body(0, vectors.proof_4_8, vectors.checkpoint_8))).status, 422);
      // A size-0 checkpoint, validly signed, whose root is not SHA-256("").
      const resigned = value(signCheckpoint({ origin: ORIGIN, size: 0, root: b64Decode(vectors.proof_4_8[0]!)! }, logKey.publicKey, logKey.sign));
      assert.equal((await post(fresh.url, body(0, [], resigned))).status, 422);
      assert.equal((await post(fresh.url, body(0, [], checkpointOf(tree, 0)))).status, 200, 'the empty tree is fine');
    } finally {
      await fresh.stop();
    }
    // Nothing of the refused requests was stored: the witness is still at 4.
    const res = await post(w.url, body(0, [], vectors.checkpoint_8));
    assert.deepEqual([res.status, res.body], [409, '4\n']);
  });

  it('405 for other methods on add-checkpoint', async () => {
    assert.equal((await fetch(`${w.url}/add-checkpoint`)).status, 405);
  });
});

describe('a split view: a second history of the log, signed by the same key', () => {
  it('is refused with 422 at every point where it departs from what the witness cosigned', async () => {
    // History A is the log as the witness saw it; history B shares the first 3 leaves, then forks.
    const a = history(RFC_LEAVES);
    const b = history([...RFC_LEAVES.slice(0, 3), new TextEncoder().encode('rewritten'), ...RFC_LEAVES.slice(4)]);
    const w = await startTestWitness({ list: logList(LOG_VKEY) });
    try {
      assert.equal((await post(w.url, body(0, [], checkpointOf(a, 3)))).status, 200);
      assert.equal((await post(w.url, body(3, proofOf(a, 3, 5), checkpointOf(a, 5)))).status, 200);
      // B at 8 with B's own (valid in B) 5 -> 8 proof: it does not lead to A's root at 5.
      const forked = await post(w.url, body(5, proofOf(b, 5, 8), checkpointOf(b, 8)));
      assert.equal(forked.status, 422, forked.body);
      // B at A's size: same size, different root.
      assert.equal((await post(w.url, body(5, [], checkpointOf(b, 5)))).status, 422);
      // A client that believes the witness is at B's size 3 learns it is at 5 (409), and still gets no cosignature for B.
      const stale = await post(w.url, body(3, proofOf(b, 3, 8), checkpointOf(b, 8)));
      assert.deepEqual([stale.status, stale.body], [409, '5\n']);
      // A continues.
      assert.equal((await post(w.url, body(5, proofOf(a, 5, 8), checkpointOf(a, 8)))).status, 200);
      const served = await (await fetch(`${w.url}/${vectors.monitoring_suffix}`)).text();
      assert.equal(served, checkpointOf(a, 8) + vectorFile('add-checkpoint-response.txt'));
    } finally {
      await w.stop();
    }
  });
});

/**
 * Sends `head`, then body bytes as fast as the socket takes them, until the server closes the
 * connection or `cap` bytes are sent; answers the bytes sent and what the server answered.
 */
function endlessBody(url: string, head: string, cap: number): Promise<{ sent: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let answer = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ sent, answer });
    };
    const pump = () => {
      while (!done && sent < cap) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      if (sent >= cap) finish();
    };
    socket.on('data', (d) => { answer += d.toString('latin1'); });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

describe('add-checkpoint: an endless body', () => {
  let w: Awaited<ReturnType<typeof startTestWitness>>;
  before(async () => { w = await startTestWitness(); });
  after(() => w.stop());

  // Before: the witness read (and threw away) whatever came after the bound, so 8 such requests kept it
  // reading gigabytes. Now it answers 400 and closes the connection: what it takes is the bound plus
  // what the sockets' buffers hold.
  for (const [name, framing] of [['declared', 'content-length: 100000000000'], ['chunked', 'transfer-encoding: chunked']] as const) {
    it(`400 and the connection closed at the bound, the rest unread (${name} length)`, async () => {
      const cap = 256 * 1024 * 1024;
      const head = `POST /add-checkpoint HTTP/1.1\r\nhost: w\r\n${framing}\r\n\r\n${name === 'chunked' ? '7fffffff\r\n' : ''}`;
      const { sent, answer } = await endlessBody(w.url, head, cap);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.ok(sent < 32 * 1024 * 1024, `the witness took ${sent} bytes before it closed the connection`);
    });
  }
});
