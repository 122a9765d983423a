// Tooling self-test (test/tooling/, reported apart from the product tests): the fault proxy
// (test/support/fault-proxy.ts) drops a connection its client has hung up on, and the process
// then exits. Resetting such a socket (ended by this side, its FIN not yet sent) fails in libuv,
// and node's exit then spins for ever: the cluster files that passed and never ended.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { outputOf } from '../support/child-output.ts';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));

// A proxy to an echo server; a client connects through it; the proxy's side of the connection is
// ended (as node does when the client hangs up) and the proxy closed at once, its FIN still queued.
const SCRIPT = `
import { createServer, connect } from 'node:net';
import { FaultProxy } from './test/support/fault-proxy.ts';
const echo = createServer((s) => s.pipe(s)).listen(0, '127.0.0.1');
await new Promise((resolve) => echo.once('listening', resolve));
const proxy = new FaultProxy({ host: '127.0.0.1', port: echo.address().port });
const port = await proxy.listen();
const accepted = new Promise((resolve) => proxy['server'].once('connection', resolve));
const client = connect(port, '127.0.0.1');
client.on('error', () => undefined);
const socket = await accepted;
socket.end();
await proxy.close();
client.destroy();
await new Promise((resolve) => echo.close(resolve));
console.log('closed');
`;

test('a proxy closed while a connection is being ended lets the process exit', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: PROJECT, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const output = await outputOf(child);
  clearTimeout(timer);
  assert.match(output.stdout, /closed/, output.stderr);
  assert.equal(output.signal, null, `the process did not exit within 20 s after its work was done:\n${output.stdout}${output.stderr}`);
  assert.equal(output.code, 0, output.stderr);
});
