// `npm run cluster`: several API nodes on one PostgreSQL and one Redis, on this machine, for a
// developer to write to, read from and break by hand (docs/operations.md, "A cluster on one
// machine"). Each node is `ledger serve` from dist/; PostgreSQL and Redis are throwaway servers
// of the cluster's own unless --database names one. Commands on standard input break and mend it.
//
//   npm run cluster -- [--nodes 3] [--port 8081] [--database postgres://...?schema=...] [--no-redis]
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Cluster, type ClusterNode } from './cluster.ts';
import { postgresServerProblem } from './pg-server.ts';
import { redisServerProblem } from './redis-server.ts';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    port: { type: 'string', default: '8081' },
    database: { type: 'string' },
    'no-redis': { type: 'boolean', default: false },
  },
});

const HELP = `commands (N is a node number, from 1):
  kill N     kill -9 the node            start N   start it again
  stop N     kill -STOP (it hangs)       cont N    kill -CONT
  cut N      partition it from PostgreSQL and Redis     heal N    reconnect it
  stall N    its database goes silent (nothing forwarded)   (heal N ends it)
  pg-restart restart PostgreSQL (the cluster's own)
  redis-stop / redis-start
  logs N     the node's output           status    every node's /readyz
  quit       stop everything`;

function fail(message: string): never {
  console.error(`cluster: ${message}`);
  process.exit(1);
}

const nodeCount = Number(values.nodes);
const firstPort = Number(values.port);
if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > 9) fail('--nodes must be 1 to 9');
if (!Number.isInteger(firstPort) || firstPort < 1 || firstPort > 65_000) fail('--port must be a port number');
if (!values.database && postgresServerProblem()) fail(`${postgresServerProblem()}; or pass --database postgres://...`);
if (!values['no-redis'] && redisServerProblem()) fail(`${redisServerProblem()}; or pass --no-redis`);

const cluster = await Cluster.start({
  nodes: nodeCount,
  ports: Array.from({ length: nodeCount }, (_, i) => firstPort + i),
  redis: !values['no-redis'],
  ...(values.database ? { databaseUrl: values.database } : {}),
});
const agent = await cluster.agent('dev');

console.log(`${nodeCount} nodes on ${cluster.pg ? `PostgreSQL ${cluster.databaseUrl}` : 'the given database'}${cluster.redis ? ` and Redis ${cluster.redis.url}` : ''}:`);
for (const [i, n] of cluster.nodes.entries()) console.log(`  ${i + 1}. ${n.node.url}`);
console.log(`\nagent ${agent.handle}, API key ${agent.secret}\n`);
console.log(`curl -s -X POST ${cluster.nodes[0]!.node.url}/v1/decisions -H "Authorization: Bearer ${agent.secret}" \\
  -H "Idempotency-Key: $(node -p 'crypto.randomUUID()')" -H "Content-Type: application/json" -d '{"symbol":"AAPL","action":"BUY"}'\n`);
console.log(HELP);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('stopping the cluster...');
  await cluster.stop();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

function nodeOf(arg: string | undefined): ClusterNode {
  const n = cluster.nodes[Number(arg) - 1];
  if (!n) throw new Error(`no node ${arg ?? ''}: nodes are 1 to ${cluster.nodes.length}`);
  return n;
}

async function run(line: string): Promise<void> {
  const [command, arg] = line.trim().split(/\s+/);
  switch (command) {
    case '': return;
    case 'kill': return nodeOf(arg).node.kill();
    case 'start': return nodeOf(arg).node.start();
    case 'stop': return nodeOf(arg).node.pause();
    case 'cont': return nodeOf(arg).node.resume();
    case 'cut': return cluster.partition(nodeOf(arg));
    case 'heal': return cluster.heal(nodeOf(arg));
    case 'stall': return nodeOf(arg).database.stall();
    case 'pg-restart':
      if (!cluster.pg) throw new Error('the database is not the cluster\'s own');
      await cluster.pg.stop('fast');
      return cluster.pg.start();
    case 'redis-stop': return cluster.redis?.stop();
    case 'redis-start': return cluster.redis?.start();
    case 'logs': return void console.log(nodeOf(arg).node.output.split('\n').slice(-40).join('\n'));
    case 'status':
      for (const [i, n] of cluster.nodes.entries()) {
        const ready = await fetch(`${n.node.url}/readyz`, { signal: AbortSignal.timeout(3_000) })
          .then(async (r) => `${r.status} ${await r.text()}`, (err: Error) => `no answer (${err.name})`);
        console.log(`  ${i + 1}. ${n.node.running ? 'running' : 'down'}; database ${n.database.mode}; /readyz ${ready}`);
      }
      return;
    case 'quit': return shutdown();
    default: console.log(HELP);
  }
}

// One command at a time, in the order given (also when they are piped in).
let queue = Promise.resolve();
const input = createInterface({ input: process.stdin, prompt: 'cluster> ' });
input.prompt();
input.on('line', (line) => {
  queue = queue.then(() => run(line).then(() => console.log('ok'), (err: Error) => console.log(`error: ${err.message}`)).finally(() => input.prompt()));
});
input.on('close', () => void queue.then(shutdown));
