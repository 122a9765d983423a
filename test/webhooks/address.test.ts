// The address guard and the retry schedule, without a network: which addresses are not public
// (IPv4, IPv6 and IPv4 inside IPv6), names checked after resolution (every address they resolve
// to) and the request pinned to the checked address; the schedule spans 3 days.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { checkHost, checkUrlShape, nonPublicReason } from '../../src/webhooks/address.ts';
import { backoffMs, DEFAULT_RETRY, nextAttemptMs, scheduleOffsets } from '../../src/webhooks/schedule.ts';
import { send } from '../../src/webhooks/send.ts';

test('non-public addresses, IPv4 and IPv6, are named; public ones are not', () => {
  const refused: [string, RegExp][] = [
    ['127.0.0.1', /loopback/], ['127.255.0.9', /loopback/], ['10.0.0.1', /private/], ['172.16.5.4', /private/], ['192.168.0.1', /private/],
    ['169.254.169.254', /link-local/], ['100.64.1.1', /CGNAT/], ['0.0.0.0', /this-network/], ['224.0.0.1', /multicast/], ['255.255.255.255', /reserved/],
    ['::1', /loopback/], ['::', /unspecified/], ['fe80::1', /link-local/], ['fe80::1%eth0', /link-local/], ['fd12:3456::1', /unique local/],
    ['ff02::1', /multicast/], ['::ffff:127.0.0.1', /loopback/], ['::ffff:7f00:1', /loopback/], ['::ffff:10.0.0.1', /private/],
    ['64:ff9b::a9fe:a9fe', /link-local/], ['2002:c0a8:0101::1', /private/], ['2001:db8::1', /documentation/],
    // IPv4 inside IPv6 in every form: translated (SIIT), compatible, NAT64 with a dotted quad, local-use NAT64.
    ['::ffff:0:7f00:1', /loopback/], ['::ffff:0:127.0.0.1', /loopback/], ['::ffff:0:a00:1', /private/], ['0:0:0:0:0:ffff:0:0', /this-network/],
    ['::127.0.0.1', /loopback/], ['::7f00:1', /loopback/], ['::a9fe:a9fe', /link-local/], ['64:ff9b::127.0.0.1', /loopback/],
    ['64:ff9b:1::808:808', /local-use NAT64/], ['64:ff9b:1:ffff::1', /local-use NAT64/],
  ];
  for (const [ip, why] of refused) assert.match(nonPublicReason(ip) ?? 'public', why, ip);
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1', '::ffff:0:808:808', '64:ff9b::808:808']) {
    assert.equal(nonPublicReason(ip), null, ip);
  }
});

test('a name is checked after resolution: every address, and the first one is the one to connect to', async () => {
  const resolve = (map: Record<string, string[]>) => async (host: string) => (map[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const r = resolve({ 'public.test': ['93.184.215.14'], 'mixed.test': ['93.184.215.14', '10.0.0.7'], 'inner.test': ['127.0.0.1'] });
  assert.deepEqual(await checkHost('public.test', false, r), { ok: true, address: '93.184.215.14', family: 4 });
  const mixed = await checkHost('mixed.test', false, r);
  assert.ok(!mixed.ok && /^mixed\.test is not a public host .*: webhooks go to public addresses only$/.test(mixed.reason), JSON.stringify(mixed));
  assert.ok(!(await checkHost('inner.test', false, r)).ok);
  assert.deepEqual(await checkHost('inner.test', true, r), { ok: true, address: '127.0.0.1', family: 4 });
  const none = await checkHost('nowhere.test', false, r);
  assert.ok(!none.ok && /^nowhere\.test is not a public host/.test(none.reason));
  assert.ok(!(await checkHost('[::1]', false, r)).ok);
  assert.match(JSON.stringify(await checkHost('[::ffff:0:7f00:1]', false, r)), /::ffff:0:7f00:1 is a loopback address: webhooks go to public addresses only/);
});

test('a refused name is not told apart: no resolved address, no reason, the same words as a name that does not resolve', async () => {
  const r = async (host: string) => {
    if (host === 'gone.test') throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    return [{ address: host === 'db.internal.test' ? '10.20.30.40' : 'fd00::7', family: host === 'db.internal.test' ? 4 : 6 }];
  };
  const reasons = await Promise.all(['db.internal.test', 'v6.internal.test', 'gone.test'].map(async (h) => {
    const c = await checkHost(h, false, r);
    assert.ok(!c.ok, h);
    return c.reason.replace(h, 'NAME');
  }));
  for (const reason of reasons) {
    assert.doesNotMatch(reason, /10\.20\.30\.40|fd00|private|unique local|ENOTFOUND|resolves to/);
    assert.equal(reason, reasons[0]);
  }
});

test('the request goes to the address that was checked, whatever the name resolves to later (no DNS rebinding)', async () => {
  const server = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  try {
    let calls = 0;
    // First answer (checked): 127.0.0.1; any later lookup would answer an address nothing listens on.
    const rebinding = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const r = await send(`http://rebind.test:${port}/x`, '{}', {}, { timeoutMs: 2000, maxResponseBytes: 1024, allowPrivate: true, resolve: rebinding });
    assert.equal(r.statusCode, 204, r.error ?? '');
    assert.equal(calls, 1, 'resolved once, for the check');
    const refused = await send(`http://rebind.test:${port}/x`, '{}', {}, { timeoutMs: 2000, maxResponseBytes: 1024, allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    assert.equal(refused.delivered, false);
    assert.match(refused.error ?? '', /^refused: rebind\.test is not a public host /);
    assert.doesNotMatch(refused.error ?? '', /127\.0\.0\.1|loopback/);
  } finally {
    server.close();
  }
});

test('a receiver answering too much is cut off, and a slow one times out', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 2000);
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 97);
    const pump = () => { while (res.write(chunk)); };
    res.on('drain', pump);
    pump();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const big = await send(`${base}/big`, '{}', {}, { timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: true });
    assert.deepEqual([big.delivered, big.statusCode], [true, 200], 'the status counts; the endless body is not read');
    const slow = await send(`${base}/slow`, '{}', {}, { timeoutMs: 200, maxResponseBytes: 1024, allowPrivate: true });
    assert.deepEqual([slow.delivered, slow.statusCode, slow.error], [false, null, 'timed out after 200 ms']);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('URLs: http(s) only, no credentials, no fragment', () => {
  assert.ok(checkUrlShape('https://example.com/hook?x=1').ok);
  for (const bad of ['ftp://example.com/', 'https://u:p@example.com/', 'https://example.com/#x', '/relative', `https://example.com/${'a'.repeat(2050)}`]) {
    assert.ok(!checkUrlShape(bad).ok, bad);
  }
});

test('the retry schedule: doubling from 5 s, at most 12 h apart, the last attempt 3 days after the first', () => {
  const offsets = scheduleOffsets(DEFAULT_RETRY);
  assert.deepEqual(offsets.slice(0, 5), [0, 5_000, 15_000, 35_000, 75_000]);
  assert.equal(offsets.length, 20);
  assert.equal(offsets[offsets.length - 1], 3 * 86_400_000);
  for (let i = 1; i < offsets.length; i++) assert.ok(offsets[i]! - offsets[i - 1]! <= 12 * 3600_000);
  assert.equal(backoffMs(DEFAULT_RETRY, 100), 12 * 3600_000);
  assert.equal(nextAttemptMs(DEFAULT_RETRY, 20, 0, 3 * 86_400_000), null, 'failed for good once the window is over');
  const spread = nextAttemptMs(DEFAULT_RETRY, 1, 0, 0, () => 0.999)!;
  assert.ok(spread > 5_000 && spread <= 5_500, 'up to 10 % spread');
});
