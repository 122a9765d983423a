// The bounded HTTP exchange (src/runtime/bounded-fetch.ts) against a local server: each way an
// exchange fails comes back as its own value (no answer, the deadline before the answer or before
// the whole body, a body broken off, over the limit declared or streamed, a refused redirect).
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { bodyText, boundedExchange, type Exchange, type ExchangeLimits } from '../../src/runtime/bounded-fetch.ts';

let server: Server;
let base: string;
const limits: ExchangeLimits = { timeoutMs: 300, maxBytes: 100, fetch: (input, init) => fetch(input, init) };

const routes: Record<string, (res: ServerResponse) => void> = {
  '/ok': (res) => res.end('\ufeffhello é'),
  '/empty': (res) => { res.statusCode = 204; res.end(); },
  '/declared-large': (res) => { res.setHeader('content-length', '1000'); res.write('x'.repeat(10)); },
  '/streamed-large': (res) => { res.write('x'.repeat(60)); setTimeout(() => res.end('y'.repeat(60)), 10); },
  '/silent': () => undefined,
  '/slow-body': (res) => { res.writeHead(200, { 'content-length': '50' }); res.write('partial'); },
  '/broken': (res) => { res.writeHead(200, { 'content-length': '50' }); res.write('partial', () => setTimeout(() => res.socket?.destroy(), 10)); },
  '/moved': (res) => { res.writeHead(302, { location: '/ok' }); res.end('see /ok'); },
};

/** What went wrong, or 'ok'. */
const failure = (e: Exchange) => (e.ok ? 'ok' : e.error);

before(async () => {
  server = createServer((req, res) => routes[req.url ?? '']?.(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test('an answer within the limits: status, headers and body bytes; the text keeps a byte-order mark', async () => {
  const answer = await boundedExchange(`${base}/ok`, { method: 'GET' }, limits);
  assert.ok(answer.ok);
  assert.equal(answer.value.status, 200);
  assert.equal(bodyText(answer.value), '\ufeffhello é');
  const empty = await boundedExchange(`${base}/empty`, {}, limits);
  assert.ok(empty.ok);
  assert.equal(empty.value.body.length, 0);
});

test('a body over the limit is refused: unread when declared, cut off when streamed', async () => {
  assert.deepEqual(failure(await boundedExchange(`${base}/declared-large`, {}, limits)), { kind: 'too_large', status: 200, declared: 1000 });
  assert.deepEqual(failure(await boundedExchange(`${base}/streamed-large`, {}, limits)), { kind: 'too_large', status: 200, declared: null });
});

test('the deadline covers the answer and its whole body', async () => {
  assert.deepEqual(failure(await boundedExchange(`${base}/silent`, {}, limits)), { kind: 'timeout', phase: 'answer' });
  assert.deepEqual(failure(await boundedExchange(`${base}/slow-body`, {}, limits)), { kind: 'timeout', phase: 'body', status: 200 });
});

test('a body broken off, and no server at all, are told apart from the deadline', async () => {
  const broken = await boundedExchange(`${base}/broken`, {}, limits);
  assert.equal(broken.ok ? 'ok' : broken.error.kind, 'broken');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refused = await boundedExchange(`http://127.0.0.1:${port}/`, {}, limits);
  assert.equal(refused.ok ? 'ok' : refused.error.kind, 'unreachable');
});

test('redirects: refused unread with manual, followed when the caller allows, an error with error', async () => {
  assert.deepEqual(failure(await boundedExchange(`${base}/moved`, { redirect: 'manual' }, limits)), { kind: 'redirect', status: 302 });
  const followed = await boundedExchange(`${base}/moved`, {}, limits);
  assert.ok(followed.ok);
  assert.equal(bodyText(followed.value), '\ufeffhello é');
  const refused = await boundedExchange(`${base}/moved`, { redirect: 'error' }, limits);
  assert.equal(refused.ok ? 'ok' : refused.error.kind, 'unreachable');
});
