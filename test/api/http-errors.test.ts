// Issue 16, finding 6: requests Node's HTTP parser or fastify's router refuse before any route
// runs are answered in the interface's 2.7 error body too, with a request id. Issue 24, finding 8:
// every answer, those included, carries that id in the Request-Id header too, and nosniff; the
// ones no route answered may be read by any origin (CORS); every HTML page has a CSP with
// frame-ancestors 'none'.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';

let store: LedgerStore;
let t: TestApp;
let port: number;
let secret: string;

before(async () => {
  store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
  secret = (await t.agent()).secret;
});
after(async () => {
  await t.close();
  await store.close();
});

/** Sends `text` as it is on a fresh connection and reads the whole answer. */
function raw(text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let out = '';
    socket.on('data', (chunk) => (out += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = out.indexOf('\r\n\r\n');
      resolve({ status: Number(out.slice(9, 12)), headers: out.slice(0, split), body: out.slice(split + 4) });
    });
  });
}

const cases: [string, string, number, string, string?][] = [
  ['a folded header', 'GET /v1/ledger HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n', 400, 'invalid_request'],
  ['bare LF line ends', 'GET /v1/ledger HTTP/1.1\nHost: x\n\n', 400, 'invalid_request'],
  ['two Content-Length headers that disagree', 'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, 'invalid_request'],
  ['a bad chunk size', 'POST /v1/decisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'invalid_request'],
  ['a control byte in Authorization', 'GET /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x01b\r\n\r\n', 400, 'invalid_request'],
  ['oversized headers', `GET /v1/ledger HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_too_large', 'headers'],
  ['no Host header', 'GET /v1/ledger HTTP/1.1\r\n\r\n', 400, 'invalid_request', 'Host'],
  ['bad percent-encoding in the path', 'GET /v1/agents/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 'invalid_request', 'path'],
  ['an overlong path segment', `GET /v1/agents/${'a'.repeat(101)}/chain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 400, 'invalid_request', 'path'],
  ['an unknown route', 'GET /v1/nothing-here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404, 'not_found'],
  ['an unknown method on a route', 'DELETE /v1/ledger HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404, 'not_found'],
];

/** Answers no route gave: the body of any of them may be read by a script on any origin. */
const NO_ROUTE = new Set(['a folded header', 'bare LF line ends', 'two Content-Length headers that disagree', 'a bad chunk size',
  'a control byte in Authorization', 'oversized headers', 'bad percent-encoding in the path', 'an overlong path segment', 'an unknown route',
  'an unknown method on a route']);

/** The value of header `name` in a raw response head. */
function header(head: string, name: string): string | undefined {
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

for (const [what, text, status, code, param] of cases) {
  test(`${what}: ${status} ${code} in the 2.7 body`, async () => {
    const res = await raw(text);
    assert.equal(res.status, status, res.headers);
    assert.match(res.headers, /content-type: application\/json/i);
    const error = (JSON.parse(res.body) as { error: { type: string; code: string; message: string; param?: string; request_id: string } }).error;
    assert.equal(error.code, code);
    assert.ok(error.type && error.message);
    assert.match(error.request_id, /^req_/);
    assert.equal(header(res.headers, 'request-id'), error.request_id, 'the Request-Id header names the body\'s request_id');
    assert.equal(header(res.headers, 'x-content-type-options'), 'nosniff');
    if (NO_ROUTE.has(what)) {
      assert.equal(header(res.headers, 'access-control-allow-origin'), '*');
      assert.match(header(res.headers, 'access-control-expose-headers') ?? '', /request-id/i);
    }
    if (param) assert.equal(error.param, param);
  });
}

/** POST /v1/decisions with `headers` and `body`, on a fresh connection. */
const post = (headers: string, body: string) => raw(`POST /v1/decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nIdempotency-Key: idem-http-errors-1\r\n${headers}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

const bodyCases: [string, () => ReturnType<typeof raw>, number, string][] = [
  ['malformed JSON', () => post('Content-Type: application/json\r\n', '{"symbol":'), 400, 'invalid_request'],
  ['a body that is not JSON', () => post('Content-Type: text/plain\r\n', 'hello'), 415, 'unsupported_media_type'],
  ['a body too large', () => post('Content-Type: application/json\r\n', `{"a":"${'x'.repeat(2_000_000)}"}`), 413, 'request_too_large'],
];

for (const [what, send, status, code] of bodyCases) {
  test(`${what}: ${status} ${code}, Request-Id as in the body, nosniff`, async () => {
    const res = await send();
    assert.equal(res.status, status, res.headers);
    const error = (JSON.parse(res.body) as { error: { code: string; request_id: string } }).error;
    assert.equal(error.code, code);
    assert.equal(header(res.headers, 'request-id'), error.request_id);
    assert.equal(header(res.headers, 'x-content-type-options'), 'nosniff');
  });
}

/** The site's page policy, or one for a page that needs its own: never framed, nothing from elsewhere. */
function assertPageHeaders(res: { headers: Record<string, unknown> }, what: string): void {
  const csp = String(res.headers['content-security-policy'] ?? '');
  assert.match(csp, /default-src 'self'/, `${what}: CSP`);
  assert.match(csp, /frame-ancestors 'none'/, `${what}: frame-ancestors`);
  assert.match(csp, /object-src 'none'/, `${what}: object-src`);
  assert.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.ok(res.headers['request-id'], `${what}: Request-Id`);
}

test('every HTML page has a CSP with frame-ancestors, nosniff and a Request-Id: /docs/api and 404 pages anywhere', async () => {
  const html = { accept: 'text/html,application/xhtml+xml' };
  const docs = await t.app.inject({ url: '/docs/api' });
  assert.equal(docs.statusCode, 200);
  assert.match(String(docs.headers['content-type']), /^text\/html/);
  assertPageHeaders(docs, '/docs/api');
  for (const url of ['/no-such-page', '/agents/someone/and/more', '/docs/api/no-such-asset', '/llms.txt/x']) {
    const res = await t.app.inject({ url, headers: html });
    assert.equal(res.statusCode, 404, url);
    assert.match(String(res.headers['content-type']), /^text\/html/, url);
    assertPageHeaders(res, url);
  }
});

test('nosniff and Request-Id on every kind of answer: JSON, text, a page', async () => {
  for (const url of ['/healthz', '/v1/ledger', '/llms.txt', '/agents', '/v1/openapi.json']) {
    const res = await t.app.inject({ url });
    assert.ok(res.statusCode < 400, `${url}: ${res.statusCode}`);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    assert.match(String(res.headers['request-id']), /^req_/, url);
  }
});

test('a failed read does not claim that nothing was recorded', async () => {
  // A real failure on our side: the app's database connection is closed under it.
  const broken = openStore('sqlite::memory:');
  await broken.migrate();
  const app = await testApp(broken);
  await broken.close();
  try {
    const res = await app.app.inject({ method: 'GET', url: '/v1/proof/dec_01JABCDEFGHJKMNPQRSTVWXYZ0' });
    assert.equal(res.statusCode, 500, res.body);
    assert.doesNotMatch(res.json().error.message, /nothing was recorded/);
  } finally {
    await app.close();
  }
});
