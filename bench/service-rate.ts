// The service's own sustained decision write rate, the baseline the log and brokers suites
// compare against: the real service in a child process on a fresh store, unsigned
// POST /v1/decisions from 200 agents (the write suite's load), 3 s of warm-up, then `seconds`.
import { freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, unsignedWrites } from './decision-load.ts';
import { benchPath, load, progress, startChild, type ChildServer } from './harness.ts';

export async function decisionRate(kind: BenchDatabase['kind'], connections: number, seconds: number): Promise<number> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  let server: ChildServer | null = null;
  try {
    const agents = await createAgents(db.url, 200);
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, { LEDGER_WRITE_LIMIT_PER_MIN: '1000000000' }));
    const writes = unsignedWrites(agents, null);
    progress(`${storeName(kind)}: POST /v1/decisions, ${connections} connections, ${seconds} s`);
    await load(server, connections, 3, writes());
    const f = await load(server, connections, seconds, writes());
    if (f.non2xx > 0 || f.errors > 0) throw new Error(`decision writes: ${f.non2xx} non-2xx, ${f.errors} errors`);
    return f.rps;
  } finally {
    await server?.stop();
    await db.remove();
  }
}
