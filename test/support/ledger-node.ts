// One API node: the real service (`node bin/ledger.js serve`, the compiled build) in a child
// process on a fixed loopback port, so that it keeps its address when it is killed and started
// again. A test may kill it (SIGKILL), stop and continue it (SIGSTOP, SIGCONT) or shut it down.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

/** What every node gets unless told otherwise: no outside calls, quiet logs, budgets no test reaches by accident. */
export const NODE_DEFAULT_ENV: Record<string, string> = {
  HOST: '127.0.0.1',
  LEDGER_LOG_LEVEL: 'warn',
  LEDGER_WRITE_LIMIT_PER_MIN: '1000000',
  LEDGER_READ_LIMIT_PER_MIN: '1000000',
  // Every node of a deployment has one public address, so one log origin; by default each node
  // would name the log after its own port, and refuse to integrate a log another node signed.
  LEDGER_LOG_ORIGIN: 'ledger.test/log',
  // Nothing listens on port 9: anchoring fails at once, locally, instead of calling the Internet.
  LEDGER_OTS_CALENDARS: 'http://127.0.0.1:9',
  LEDGER_BITCOIN_HEADERS_URL: 'http://127.0.0.1:9',
};

export class LedgerNode {
  private child: ChildProcess | null = null;
  private log = '';
  private exit: Promise<number | string | null> = Promise.resolve(null);

  /** `wrapper`: a command the service runs under (e.g. `['fiu-run', '-x']`): it must exec the service or trace it. */
  constructor(readonly name: string, readonly port: number, private env: Record<string, string>, private readonly cwd: string, private wrapper: string[] = []) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Everything the process wrote to stdout and stderr, over all its runs. */
  get output(): string {
    return this.log;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process (with `env` added to its environment from now on) and waits until /healthz answers. */
  async start(env: Record<string, string> = {}, timeoutMs = 30_000, wrapper?: string[]): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.env = { ...this.env, ...env };
    if (wrapper) this.wrapper = wrapper;
    const [command, ...args] = [...this.wrapper, process.execPath, LEDGER_BIN, 'serve'];
    const child = spawn(command!, args, {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...NODE_DEFAULT_ENV, ...this.env, PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.log += `--- ${this.name} started (pid ${child.pid})\n`;
    child.stdout!.on('data', (c: Buffer) => (this.log += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.log += c.toString()));
    this.exit = new Promise((resolve) => child.once('exit', (code, signal) => {
      this.log += `--- ${this.name} exited (${signal ?? code})\n`;
      resolve(signal ?? code);
    }));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.name} exited before it answered:\n${this.log}`);
      const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => null);
      if (res?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`${this.name} did not answer /healthz within ${timeoutMs} ms:\n${this.log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** kill -9, and waits until the process is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGCONT'); // a stopped process dies of SIGKILL too, but say it plainly
    this.child!.kill('SIGKILL');
    await this.exit;
  }

  /** kill -STOP: the process keeps its connections and answers nothing. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGTERM (a graceful shutdown); answers the exit code, or kills it after `graceMs`. */
  async terminate(graceMs = 15_000): Promise<number | string | null> {
    if (!this.running) return this.exit;
    this.child!.kill('SIGCONT');
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    try {
      return await this.exit;
    } finally {
      clearTimeout(timer);
    }
  }
}
