// A TCP proxy between the service and a dependency (PostgreSQL, Redis), to inject network faults:
// drop the open connections, cut the link (drop and refuse new ones: a partition), or stall it
// (connections stay open and nothing is forwarded either way: a silent network or a hung server).
import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyState = 'forward' | 'cut' | 'stalled';

export class FaultProxy {
  private state: ProxyState = 'forward';
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  private readonly server: Server;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  get mode(): ProxyState {
    return this.state;
  }

  /** Listens on `port` (0: a free one) and answers the port. */
  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as { port: number }).port;
    return this.port;
  }

  private accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.state === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    this.pairs.add(pair);
    client.on('close', () => {
      this.pairs.delete(pair);
      pair.upstream?.destroy();
    });
    if (this.state === 'stalled') return; // accepted, never answered
    const upstream = connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => { if (this.state === 'forward') upstream.write(chunk); });
    upstream.on('data', (chunk) => { if (this.state === 'forward') client.write(chunk); });
  }

  /**
   * Resets every open connection; new ones are forwarded (as pg_terminate_backend or a restarted
   * router do). A connection whose client has hung up, and that this side has ended in turn (its
   * FIN on its way), is destroyed instead: libuv refuses to reset a socket that is shutting down
   * (EINVAL), node then holds the handle as closing for ever, and the process, its work done,
   * spins in node's exit cleanup and never ends (a cluster's teardown under load: the nodes
   * stopped, then the proxies dropped).
   */
  drop(): void {
    for (const { client, upstream } of this.pairs) {
      if (client.writableEnded) client.destroy();
      else client.resetAndDestroy();
      upstream?.destroy();
    }
  }

  /** A partition: open connections are reset and new ones refused until restore(). */
  cut(): void {
    this.state = 'cut';
    this.drop();
  }

  /** A silent network: connections stay open, bytes go nowhere, new connections are accepted and never answered. */
  stall(): void {
    this.state = 'stalled';
  }

  /** Forwards again. Connections that were stalled mid-conversation have lost bytes: they are reset. */
  restore(): void {
    const wasStalled = this.state === 'stalled';
    this.state = 'forward';
    if (wasStalled) this.drop();
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
