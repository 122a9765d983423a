// A free loopback TCP port for a server a test starts (and may restart on the same port). Chosen
// at random below Linux's ephemeral range (32768 and up), then bound once and let go: a port the
// kernel hands out by itself (binding port 0) is an ephemeral one, which any outgoing connection
// (a pool's connection to PostgreSQL, say) may take before the server binds it again.
import { createServer } from 'node:net';

const LOW = 20_000;
const HIGH = 32_767;

function bindable(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = await bindable(LOW + Math.floor(Math.random() * (HIGH - LOW + 1)));
    if (port !== null) return port;
  }
  const port = await bindable(0);
  if (port === null) throw new Error('no free loopback port');
  return port;
}
