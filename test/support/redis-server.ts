// A throwaway Redis server of the test's own, on a free port, with no persistence, that a test may
// stop and start again on the same port.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './ports.ts';

const BINARY = process.env.TEST_REDIS_SERVER ?? 'redis-server';

/** Why this machine cannot run a Redis of the test's own, or null when it can. */
export function redisServerProblem(): string | null {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? null : `no redis-server binary (${probe.error?.message ?? probe.stderr}; set TEST_REDIS_SERVER)`;
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

export class RedisServer {
  private child: ChildProcess | null = null;
  private output = '';

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(BINARY, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout!.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.output += c.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await accepting(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start: ${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Stops it (SIGTERM: connections close) and waits until it is gone. A server already gone, by
   * an exit or a signal, is not waited for: its 'exit' has been and will not come again.
   */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    this.child = null;
  }
}
