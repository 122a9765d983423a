// Issue 16, finding 6: requests Node's HTTP parser or fastify's router refuse before any route
// runs are answered in the interface's 2.7 error body too, with a request id.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';

let store: LedgerStore;
let t: TestApp;
let port: number;

before(async () => {
  store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
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
];

for (const [what, text, status, code, param] of cases) {
  test(`${what}: ${status} ${code} in the 2.7 body`, async () => {
    const res = await raw(text);
    assert.equal(res.status, status, res.headers);
    assert.match(res.headers, /content-type: application\/json/i);
    const error = (JSON.parse(res.body) as { error: { type: string; code: string; message: string; param?: string; request_id: string } }).error;
    assert.equal(error.code, code);
    assert.ok(error.type && error.message);
    assert.match(error.request_id, /^req_/);
    if (param) assert.equal(error.param, param);
  });
}

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
