// Several API nodes on one PostgreSQL and one Redis, as a deployment runs them: each node is the
// real service in a child process (ledger-node.ts), and reaches the database and Redis through a
// proxy of its own (fault-proxy.ts), so one node can be partitioned while the others carry on.
// The database and Redis are servers of the cluster's own (pg-server.ts, redis-server.ts) unless
// a database URL is given. Used by the scale and fault tests and by `npm run cluster`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres/store.ts';
import { FaultProxy } from './fault-proxy.ts';
import { LedgerNode } from './ledger-node.ts';
import type { LoadAgent, Target } from './load.ts';
import { PgServer } from './pg-server.ts';
import { freePort } from './ports.ts';
import { RedisServer } from './redis-server.ts';

/**
 * The environment that makes a node commit without the per-schema append lock (no-append-lock.mjs),
 * `batchesInFlight` batches at once: for the ordering test's failing leg and the append-lock bench
 * only. The switch is a preload of the test support, so no deployment can turn it on.
 */
export function noAppendLockEnv(batchesInFlight = 1): Record<string, string> {
  const preload = fileURLToPath(new URL('./no-append-lock.mjs', import.meta.url));
  return { NODE_OPTIONS: `--import=${preload}`, LEDGER_TEST_BATCHES_IN_FLIGHT: String(batchesInFlight) };
}

export type ClusterOptions = {
  nodes?: number;
  /** An existing PostgreSQL database to use (with its ?schema=); default: a server of the cluster's own. */
  databaseUrl?: string;
  /** Whether the nodes share a Redis of the cluster's own (default true). */
  redis?: boolean;
  /** Extra environment of every node (LEDGER_WRITE_LIMIT_PER_MIN, ...). */
  env?: Record<string, string>;
  /** Extra parameters of the nodes' database URL: the bounds (append_lock_timeout, query_timeout, ...). */
  databaseParams?: Record<string, string>;
  /** Fixed ports for the nodes (`npm run cluster`); default: free ones. */
  ports?: number[];
};

export type ClusterNode = {
  node: LedgerNode;
  target: Target;
  /** The node's own way to the database and to Redis. */
  database: FaultProxy;
  redis: FaultProxy | null;
};

/** Stops everything a cluster started that must not outlive the test process, however it ends. */
const running = new Set<() => void>();
process.once('exit', () => {
  for (const stop of running) stop();
});

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 5432) };
}

/** The database URL a node uses: through its proxy, named in pg_stat_activity, with the given bounds. */
function nodeDatabaseUrl(databaseUrl: string, proxyPort: number, name: string, params: Record<string, string>): string {
  const u = new URL(databaseUrl);
  u.hostname = '127.0.0.1';
  u.port = String(proxyPort);
  u.searchParams.set('application_name', name);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

export class Cluster {
  private constructor(
    readonly dir: string,
    readonly pg: PgServer | null,
    readonly redis: RedisServer | null,
    /** The database URL (direct, not proxied) with its schema. */
    readonly databaseUrl: string,
    /** A store on the database, direct: for creating agents and checking what was recorded. */
    readonly store: PostgresStore,
    readonly nodes: ClusterNode[],
  ) {}

  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-cluster-'));
    let pg: PgServer | null = null;
    let redis: RedisServer | null = null;
    try {
      pg = options.databaseUrl ? null : await PgServer.start('cluster-pg');
      redis = options.redis === false ? null : await RedisServer.start();
    } catch (err) {
      pg?.destroy();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const databaseUrl = options.databaseUrl ?? pg!.url('postgres', { schema: 'ledger' });
    const store = new PostgresStore({ ...parsePostgresUrl(databaseUrl), poolSize: 4 });
    await store.migrate();
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < (options.nodes ?? 3); i++) {
      const name = `node-${i + 1}`;
      const database = new FaultProxy(hostPort(databaseUrl));
      const redisProxy = redis ? new FaultProxy({ host: '127.0.0.1', port: redis.port }) : null;
      const env: Record<string, string> = {
        LEDGER_DATABASE_URL: nodeDatabaseUrl(databaseUrl, await database.listen(), name, options.databaseParams ?? {}),
        ...(redisProxy ? { LEDGER_REDIS_URL: `redis://127.0.0.1:${await redisProxy.listen()}` } : {}),
        ...options.env,
      };
      const node = new LedgerNode(name, options.ports?.[i] ?? await freePort(), env, dir);
      nodes.push({ node, target: { name, url: node.url }, database, redis: redisProxy });
    }
    const cluster = new Cluster(dir, pg, redis, databaseUrl, store, nodes);
    running.add(cluster.emergencyStop);
    try {
      await Promise.all(nodes.map((n) => n.node.start()));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** An active agent with its API key. */
  async agent(prefix = 'cluster'): Promise<LoadAgent> {
    const handle = `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`.slice(0, 32);
    const created = await new Operators(this.store, systemClock).createAgent({ handle });
    if (!created.ok) throw new Error(created.error.message);
    return { agentId: created.value.agent.id, handle, secret: created.value.apiKey.secret };
  }

  /** Targets in turn, skipping none: a client that does not know which node is down. */
  roundRobin(nodes: ClusterNode[] = this.nodes): () => Target {
    let i = 0;
    return () => nodes[i++ % nodes.length]!.target;
  }

  /** Cuts the node off from the database and Redis (connections reset, new ones refused). */
  partition(n: ClusterNode): void {
    n.database.cut();
    n.redis?.cut();
  }

  heal(n: ClusterNode): void {
    n.database.restore();
    n.redis?.restore();
  }

  /** What every node wrote, for a failing test's message. */
  output(): string {
    return this.nodes.map((n) => n.node.output).join('\n');
  }

  async stop(): Promise<void> {
    running.delete(this.emergencyStop);
    await Promise.all(this.nodes.map((n) => n.node.terminate(5_000)));
    await Promise.all(this.nodes.flatMap((n) => [n.database.close(), n.redis?.close()]));
    await this.store.close();
    await this.redis?.stop();
    this.pg?.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** At process exit, synchronously: kill the nodes, Redis and PostgreSQL. */
  private readonly emergencyStop = (): void => {
    for (const n of this.nodes) void n.node.kill();
    void this.redis?.stop();
    this.pg?.destroy();
  };
}
