// A throwaway PostgreSQL server of the test's own (initdb in a temporary directory, postgres on a
// free port, trust authentication), so a test may restart it, terminate its backends or stream it
// to a replica without touching the machine's shared server. initdb refuses to run as root, so
// as root every server binary runs as the `postgres` OS user.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';

const execFileAsync = promisify(execFile);

const VERSIONS = ['17', '16', '15', '14', '13'];

/** The directory of PostgreSQL's server binaries (TEST_PG_BIN, else the newest Debian install), or null. */
export function postgresBinDir(): string | null {
  const candidates = [process.env.TEST_PG_BIN, ...VERSIONS.map((v) => `/usr/lib/postgresql/${v}/bin`)];
  return candidates.find((dir) => dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_basebackup'))) ?? null;
}

/** Why this machine cannot run a server of the test's own, or null when it can. */
export function postgresServerProblem(): string | null {
  if (postgresBinDir() === null) return 'no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup; set TEST_PG_BIN)';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root without a postgres OS user to run initdb as';
  return null;
}

/** Settings for a test server: small, quiet, fast (fsync off: the tests crash processes, not machines). */
const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  'max_connections = 200',
  'shared_buffers = 32MB',
  'fsync = off',
  'full_page_writes = off',
  'log_min_messages = warning',
  'wal_level = replica',
  'max_wal_senders = 4',
  'hot_standby = on',
  'hot_standby_feedback = on',
];

export class PgServer {
  private constructor(readonly dir: string, readonly port: number) {}

  /** The command line that runs a server binary (as the postgres user when we are root). */
  private static command(bin: string, args: string[]): [string, string[]] {
    const path = join(postgresBinDir()!, bin);
    return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  }

  /**
   * Runs a server binary; throws with its output when it fails. Asynchronous, so that proxies and
   * clients in this process keep running while the server stops or starts.
   */
  private static async run(bin: string, args: string[], timeoutMs = 60_000): Promise<string> {
    const [cmd, argv] = PgServer.command(bin, args);
    try {
      return (await execFileAsync(cmd, argv, { encoding: 'utf8', timeout: timeoutMs })).stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${bin} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  }

  private static tempDir(name: string): string {
    const dir = mkdtempSync(join(tmpdir(), `ledger-${name}-`));
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    return dir;
  }

  /** A fresh primary, started. */
  static async start(name = 'pg'): Promise<PgServer> {
    const dir = PgServer.tempDir(name);
    const server = new PgServer(dir, await freePort());
    try {
      await PgServer.run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
      appendFileSync(join(dir, 'data', 'postgresql.conf'), `\n${SETTINGS.join('\n')}\n`);
      await server.start();
    } catch (err) {
      server.destroy();
      throw err;
    }
    return server;
  }

  /** A streaming replica of `primary` (pg_basebackup -R), started and replaying. */
  static async replicaOf(primary: PgServer, name = 'replica'): Promise<PgServer> {
    const dir = PgServer.tempDir(name);
    const replica = new PgServer(dir, await freePort());
    try {
      await PgServer.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(dir, 'data'), '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
      await replica.start();
    } catch (err) {
      replica.destroy();
      throw err;
    }
    return replica;
  }

  /** Starts the stopped server on its port; waits until it accepts connections. */
  async start(): Promise<void> {
    await PgServer.run('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log'), '-w', '-t', '60',
      '-o', `-p ${this.port} -k ${this.dir}`, 'start']);
  }

  /** Stops the server: `fast` ends every session (clients see 57P01), `immediate` is a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await PgServer.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  url(database = 'postgres', params: Record<string, string> = {}): string {
    const query = new URLSearchParams(params).toString();
    return `postgres://postgres@127.0.0.1:${this.port}/${database}${query ? `?${query}` : ''}`;
  }

  /** One statement on a connection of its own. */
  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as R[];
    } finally {
      await client.end();
    }
  }

  /**
   * Stops the server (as a crash: nothing is worth keeping) and deletes its directory.
   * Synchronous, so that it can run at process exit.
   */
  destroy(): void {
    const [cmd, argv] = PgServer.command('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    spawnSync(cmd, argv, { stdio: 'ignore', timeout: 30_000 });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
