// Public reads answered by a read thread (src/read-threads.ts, src/api/read-handoff.ts), on both
// stores, over real sockets: the same answers as the serving thread gives (bodies, headers,
// compression, 304, HEAD), the metrics of docs/operations.md, the serving thread's request id and
// rate limit, a body that waits for its socket (at most the window of chunks held here), a client
// that hangs up freeing its read, a thread that stops costing no read, and one still starting
// stopped at once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { loadLogKey } from '../../src/log/key.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { ReadThreads, WINDOW } from '../../src/read-threads.ts';
import { SharedPacing } from '../../src/runtime/loop-share.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { postDecision } from '../support/app.ts';
import { forEachStore, sqliteKind } from '../support/stores.ts';

const QUIET = { LEDGER_LOG_LEVEL: 'silent', LEDGER_OTS_CALENDARS: 'http://127.0.0.1:9', LEDGER_BITCOIN_HEADERS_URL: 'http://127.0.0.1:9', LEDGER_WRITE_LIMIT_PER_MIN: '100000' };

/** A metadata blob that keeps a decision just under the 128 KiB body limit. */
const BLOB = 'x'.repeat(120 * 1024);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const started = Date.now(); !check(); await sleep(20)) if (Date.now() - started > ms) assert.fail(`not within ${ms} ms: ${what}`);
}

/** Headers that differ between two answers of the same read by nature (and framing: a read thread compresses a page whole), not by who answered. */
const PER_ANSWER = new Set(['date', 'request-id', 'etag', 'ratelimit-remaining', 'ratelimit-reset', 'keep-alive', 'connection', 'content-length', 'transfer-encoding']);

/** An answer with what changes between two reads of the same thing taken out. */
async function comparable(res: Response): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!PER_ANSWER.has(name)) headers[name] = value;
  });
  const text = await res.text();
  const json = /json/.test(headers['content-type'] ?? '') && !/ndjson/.test(headers['content-type'] ?? '');
  const body = json ? JSON.parse(text, (key, value) => (key === 'generated_at' || key === 'request_id' ? '…' : value)) : text;
  return { status: res.status, headers, body };
}

await forEachStore('public reads answered by a read thread', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-read-threads-'));
  let threaded: RunningServer;
  let here: RunningServer;
  let handle: string;
  let ids: string[];

  before(async () => {
    const url = await kind.freshUrl();
    const logKey = await loadLogKey({ keyFile: null, dataDir: dir, origin: 'read-threads.test' });
    assert.ok(logKey.ok);
    const masterKey = randomBytes(32).toString('base64');
    const env = { ...QUIET, PORT: '0', LEDGER_DATABASE_URL: url, LEDGER_LOG_KEY_FILE: logKey.value.source.path, LEDGER_MASTER_KEY: masterKey };
    threaded = await startServer(loadConfig({ ...env, LEDGER_READ_THREADS: '1', LEDGER_METRICS: 'true' }));
    here = await startServer(loadConfig({ ...env, LEDGER_READ_THREADS: '0' }));
    // The start waits for no read thread (server.ts): its reads are answered here until it is ready.
    await until('the read thread is ready', () => threaded.readThreads?.state.ready === 1, 60_000);
    assert.equal(here.readThreads, null);
    handle = `threaded-${process.pid}`;
    const created = await new Operators(threaded.store, systemClock).createAgent({ handle, demo: false });
    assert.ok(created.ok);
    ids = [];
    for (let i = 0; i < 3; i++) {
      const res = await postDecision(threaded.ledger, created.value.apiKey.secret, { symbol: 'NVDA', action: 'BUY', thesis: `number ${i}` });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    for (const server of [threaded, here]) await logHolds(server, ids.length);
  });
  after(async () => {
    await threaded?.stop();
    await here?.stop();
    await kind.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the thread gives the answers the serving thread gives, and takes every public read', async () => {
    const paths = [
      '/v1/transparency', `/v1/agents/${handle}`, `/v1/agents/${handle}/chain`, `/v1/proof/${ids[1]}`, `/v1/export?agent=${handle}`,
      '/v1/ledger', `/v1/agents/${handle}/performance?portfolio=model`, '/v1/agents/nobody-here', '/v1/proof/rec_nope', '/v1/log/checkpoint',
      '/', `/agents/${handle}`, '/llms.txt', `/badge/${handle}.svg`,
    ];
    const before = threaded.readThreads!.state.answered;
    for (const path of paths) {
      const [a, b] = await Promise.all([fetch(threaded.url + path), fetch(here.url + path)]);
      assert.deepEqual(await comparable(a), await comparable(b), path);
    }
    // At least: the server builds its documents (/docs) through the same path right after it listens.
    assert.ok(threaded.readThreads!.state.answered - before >= paths.length, 'each read went to the thread');
    const metrics = await (await fetch(`${threaded.url}/metrics`)).text();
    assert.match(metrics, /^ledger_read_threads\{state="configured"\} 1$/m);
    assert.match(metrics, /^ledger_read_threads\{state="ready"\} 1$/m);
    const handed = Number(/^ledger_read_thread_reads_total (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(handed >= paths.length, metrics);
  });

  test('the request id and the rate limit are the serving thread\'s, whatever the client sends', async () => {
    const res = await fetch(`${threaded.url}/v1/agents/nobody-here`, { headers: { 'x-ledger-handed-request-id': 'req_forged' } });
    assert.equal(res.status, 404);
    const id = res.headers.get('request-id');
    assert.match(String(id), /^req_[0-9a-f]{24}$/);
    assert.equal((await res.json()).error.request_id, id);
    assert.equal(res.headers.get('ratelimit-limit'), '600', 'the serving thread\'s per-minute limit');
  });

  test('compressed, conditional and HEAD reads', async () => {
    const url = `${threaded.url}/v1/agents/${handle}/chain`;
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    const text = await plain.text();
    const br = await rawGet(url, { 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.body).toString(), text);
    const etag = plain.headers.get('etag')!;
    const again = await fetch(url, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), plain.headers.get('content-type'));
    assert.equal(await head.text(), '');
  });

  test('a long body waits for its socket, at most the window held here; a client that hangs up frees its read', async () => {
    const whale = `whale-${process.pid}`;
    const created = await new Operators(threaded.store, systemClock).createAgent({ handle: whale, demo: false });
    assert.ok(created.ok);
    for (let i = 0; i < 160; i++) {
      const res = await postDecision(threaded.ledger, created.value.apiKey.secret, { symbol: 'NVDA', action: 'BUY', metadata: { blob: BLOB } });
      assert.equal(res.statusCode, 201, res.body);
    }
    const threads = threaded.readThreads!;
    const req = request(`${threaded.url}/v1/export?agent=${whale}`, { headers: { 'accept-encoding': 'identity' } });
    const res = await new Promise<import('node:http').IncomingMessage>((resolve) => req.on('response', resolve).end());
    res.pause(); // a reader that reads nothing: some 20 MB wait
    let most = 0;
    for (let i = 0; i < 40; i++, await sleep(25)) most = Math.max(most, threads.state.buffered);
    assert.equal(threads.state.inFlight, 1, 'the export is still under way');
    assert.ok(most > 0, 'chunks came while the socket was full');
    assert.ok(most <= WINDOW, `at most ${WINDOW} chunks held here (saw ${most})`);
    req.destroy();
    await until('the read ends', () => threads.state.inFlight === 0 && threaded.ledger.gate.load.running === 0);
  });
});

test('a read thread paces its long reads while writes arrive on the serving thread, and not while none do', async () => {
  const kind = sqliteKind();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-read-pacing-'));
  const url = await kind.freshUrl();
  const logKey = await loadLogKey({ keyFile: null, dataDir: dir, origin: 'read-threads.test' });
  assert.ok(logKey.ok);
  const server = await startServer(loadConfig({
    ...QUIET, PORT: '0', LEDGER_DATABASE_URL: url, LEDGER_LOG_KEY_FILE: logKey.value.source.path, LEDGER_MASTER_KEY: randomBytes(32).toString('base64'),
    LEDGER_READ_THREADS: '1', LEDGER_METRICS: 'true', LEDGER_READ_LOOP_SHARE: '5',
  }));
  const paced = async () => Number(/^ledger_read_paced_turns_total (\d+)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);
  try {
    await until('the read thread is ready', () => server.readThreads?.state.ready === 1, 60_000);
    const whale = `paced-whale-${process.pid}`;
    const created = await new Operators(server.store, systemClock).createAgent({ handle: whale, demo: false });
    assert.ok(created.ok);
    const secret = created.value.apiKey.secret;
    for (let i = 0; i < 80; i++) {
      const res = await postDecision(server.ledger, secret, { symbol: 'NVDA', action: 'BUY', metadata: { blob: BLOB } });
      assert.equal(res.statusCode, 201, res.body);
    }
    await sleep(1_200); // past the pacer's window: no write near
    const before = await paced();
    const alone = await fetch(`${server.url}/v1/export?agent=${whale}`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(alone.status, 200);
    assert.ok((await alone.text()).split('\n').filter(Boolean).length > 80, 'the export is whole');
    assert.equal(await paced(), before, 'a reader alone is not paced');

    let writing = true;
    const writes = (async () => {
      for (let i = 0; writing; i++, await sleep(20)) {
        const res = await postDecision(server.ledger, secret, { symbol: 'NVDA', action: 'SELL', thesis: `meanwhile ${i}` });
        assert.equal(res.statusCode, 201, res.body);
      }
    })();
    try {
      await sleep(50);
      const during = await fetch(`${server.url}/v1/export?agent=${whale}`, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(during.status, 200);
      assert.ok((await during.text()).split('\n').filter(Boolean).length >= 80, 'the export is whole');
    } finally {
      writing = false;
      await writes;
    }
    assert.ok(await paced() > before, 'the read thread waited for room while the writes arrived');
  } finally {
    await server.stop();
    await kind.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a read thread that stops: its read is answered on the serving thread, and it starts again', async () => {
  const kind = sqliteKind();
  const store = await kind.open();
  const config = loadConfig({ ...QUIET, LEDGER_DATABASE_URL: 'sqlite::memory:' });
  const said: string[] = [];
  const threads = new ReadThreads({
    threads: 1, heapMb: 64, data: { config, logVkey: null, pacing: new SharedPacing().memory }, log: (_level, message) => said.push(message),
    entry: new URL('../support/read-thread-exits.ts', import.meta.url),
  });
  await threads.start(30_000);
  const ledger = await buildApp({ ...compose({ store, config, checkSignature: signatureChecker(store) }), readHandoff: threads });
  try {
    assert.equal(threads.state.ready, 1);
    const res = await ledger.app.inject({ url: '/v1/transparency' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().object, 'transparency');
    assert.equal(threads.state.answered, 1, 'the read went to the thread first');
    assert.ok(said.some((m) => /read thread stopped/.test(m)), said.join('\n'));
    await until('the thread is back', () => threads.state.ready === 1, 5_000);
  } finally {
    await ledger.close();
    await threads.close();
    await store.close();
    await kind.cleanup();
  }
});

test('a read thread still starting is stopped at once: a stop soon after the start does not wait for it', async () => {
  const config = loadConfig({ ...QUIET, LEDGER_DATABASE_URL: 'sqlite::memory:' });
  const threads = new ReadThreads({
    threads: 1, heapMb: 64, data: { config, logVkey: null, pacing: new SharedPacing().memory }, log: () => undefined,
    entry: new URL('../support/read-thread-starts-slowly.ts', import.meta.url),
  });
  await threads.start(200);
  assert.equal(threads.state.ready, 0);
  const started = Date.now();
  await threads.close();
  // Asked to close, a thread that is not listening yet would be cut off only after 5 s.
  assert.ok(Date.now() - started < 3_000, `closed in ${Date.now() - started} ms`);
});

/** Waits until the server's global log has a checkpoint of `size` records (the log integrator runs apart). */
async function logHolds(server: RunningServer, size: number): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 10_000; await sleep(50)) {
    const transparency = await (await fetch(`${server.url}/v1/transparency`)).json();
    if (transparency.log.tree_size === size) return;
  }
  assert.fail(`the log of ${server.url} did not reach ${size} records`);
}

/** A GET whose body comes back as bytes, as sent (fetch would decode it). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) })).on('error', reject);
    }).on('error', reject).end();
  });
}
