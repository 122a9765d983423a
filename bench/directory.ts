// The directory's benchmark: GET /v1/agents (first page, and a deep page: the page after the first
// --deep agents, through a cursor; and every page up to it in turn, more pages than the directory keeps
// built, so each is built for its request), the /agents leaderboard page and its JSON twin, and /healthz
// (the HTTP floor), at a board of --agents agents (default 100,000) on SQLite and PostgreSQL,
// against the real service (startServer, its directory job running) in a child process,
// measured one after the other in the same run. Goal: p99 under 50 ms for each.
//
// The board is seeded as the directory job leaves it: agents, their chain heads (counts only) and
// one agent_headlines row each, built by the directory's own rules (rules.ts headlineOf) from
// report figures drawn at random (a fixed seed): 10% demo, 5% synthetic, 3% retired, 20% without a
// report. Rows agree with the heads, so the job finds nothing to project and only polls.
//
//   npm run bench -- directory [--agents 100000] [--deep 50000] [--duration 10] [--warmup 2] [--connections 4] [--no-postgres]
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import type { Request } from 'autocannon';
import { openStore } from '../src/store/open.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { PostgresStore } from '../src/store/postgres/store.ts';
import type { Headline } from '../src/directory/port.ts';
import { headlineValues, insertHeadlineSql } from '../src/store/directory-rows.ts';
import { headlineOf, type HeadlineFacts } from '../src/directory/rules.ts';
import { benchPath, fixed, integerFlag, load, markdownTable, progress, startChild, suiteFlags, type ChildServer, type Figures } from './harness.ts';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';

export type DirectoryBenchOptions = { agents: number; deep: number; duration: number; warmup: number; connections: number; postgres: boolean };

const GOAL_P99_MS = 50;
const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00.000Z');

type Kind = BenchDatabase['kind'];
type Row = { kind: Kind; target: string; figures: Figures; floor: Figures };

/** A small deterministic generator (mulberry32), so every run seeds the same board. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function agentRow(i: number, next: () => number): { agent: { id: string; handle: string; status: string; demo: boolean; createdAt: string }; head: { seq: number; recordedAt: string | null }; headline: Headline } {
  const id = `agt_${String(i).padStart(26, '0')}`;
  const createdAt = new Date(NOW - 900 * DAY + i * 60_000).toISOString();
  const demo = next() < 0.1;
  const status = next() < 0.03 ? 'retired' : 'active';
  const records = 1 + Math.floor(next() * 5000);
  const history = Math.floor(next() * 800);
  const firstRecordAt = new Date(NOW - history * DAY - DAY).toISOString();
  const lastRecordAt = new Date(NOW - Math.floor(next() * 30) * DAY).toISOString();
  const hasReport = next() >= 0.2;
  const asOf = new Date(Date.parse(firstRecordAt) + history * DAY).toISOString().slice(0, 10);
  const value = (x: number) => ({ value: x.toFixed(4) });
  const days = 40; // enough for the 32-point curve
  const series = Array.from({ length: days }, (_, d) => ({ date: asOf, value: (100_000 * (1 + Math.sin(i + d / 20) * 0.1)).toFixed(2) }));
  const published = {
    metrics: {
      cumulative_return: value(next() - 0.4), excess_return: value(next() - 0.5), sharpe: history > 365 ? value(next() * 3 - 1) : { value: null, reason: 'needs 252 daily returns' },
      max_drawdown: value(-next() * 0.5),
    },
    benchmark: { symbol: 'SPY', metrics: { cumulative_return: value(0.1) } },
    synthetic: next() < 0.05,
    as_of: asOf,
    start_value: '100000.00',
    inception: firstRecordAt,
    series,
  };
  const facts = {
    agent: { id, handle: `agent-${i}`, displayName: null, status, demo, createdAt },
    records, decisions: records, executions: 0, signed: Math.floor(records * next()), linkToken: 0, firstRecordAt, lastRecordAt,
    model: hasReport ? { computedAt: new Date(NOW).toISOString(), asOf, text: { published } } : null,
    broker: null,
  } as unknown as HeadlineFacts;
  const headline = { ...headlineOf(facts, new Date(NOW)), modelComputedAt: null };
  return { agent: { id, handle: `agent-${i}`, status, demo, createdAt }, head: { seq: records, recordedAt: lastRecordAt }, headline };
}

export async function seedBoard(db: BenchDatabase, n: number): Promise<number> {
  const store = openStore(db.url);
  const started = performance.now();
  try {
    await store.migrate();
    const next = random(29);
    const rows = Array.from({ length: n }, (_, i) => agentRow(i, next));
    if (store instanceof SqliteStore) {
      const agent = store.db.prepare('INSERT INTO agents (id, handle, display_name, status, demo, created_at) VALUES (?, ?, NULL, ?, ?, ?)');
      const head = store.db.prepare('INSERT INTO chain_heads (agent_id, seq, hash, recorded_at) VALUES (?, ?, ?, ?)');
      const named = insertHeadlineSql((i) => `@p${i}`);
      const line = store.db.prepare(named);
      store.db.transaction(() => {
        for (const r of rows) {
          agent.run(r.agent.id, r.agent.handle, r.agent.status, r.agent.demo ? 1 : 0, r.agent.createdAt);
          head.run(r.agent.id, r.head.seq, '0'.repeat(64), r.head.recordedAt);
          const values = [r.agent.id, 1, ...headlineValues(r.headline, (b) => (b ? 1 : 0))];
          line.run(Object.fromEntries(values.map((v, i) => [`p${i + 1}`, v])));
        }
        store.db.prepare('UPDATE agent_headlines_board SET version = 1, projected_at = ? WHERE id = 1').run(new Date(NOW).toISOString());
      }).immediate();
    } else if (store instanceof PostgresStore) {
      await store.pool.transaction(async (c: pg.PoolClient) => {
        for (let start = 0; start < rows.length; start += 500) {
          const chunk = rows.slice(start, start + 500);
          const values = (width: number) => chunk.map((_, j) => `(${Array.from({ length: width }, (_, k) => `$${j * width + k + 1}`).join(', ')})`).join(', ');
          await c.query(`INSERT INTO agents (id, handle, display_name, status, demo, created_at) VALUES ${values(6)}`,
            chunk.flatMap((r) => [r.agent.id, r.agent.handle, null, r.agent.status, r.agent.demo, r.agent.createdAt]));
          await c.query(`INSERT INTO chain_heads (agent_id, seq, hash, recorded_at) VALUES ${values(4)}`, chunk.flatMap((r) => [r.agent.id, r.head.seq, '0'.repeat(64), r.head.recordedAt]));
          const columns = insertHeadlineSql((i) => `$${i}`).replace(/VALUES \(.*\)$/s, '');
          await c.query(`${columns}VALUES ${values(25)}`, chunk.flatMap((r) => [r.agent.id, 1, ...headlineValues(r.headline, (b) => b)]));
          if ((start / 500) % 20 === 0) progress(`PostgreSQL: seeded ${start + chunk.length} / ${n}`);
        }
        await c.query('UPDATE agent_headlines_board SET version = 1, projected_at = $1 WHERE id = 1', [new Date(NOW).toISOString()]);
      });
      await store.pool.query('ANALYZE');
    }
    return (performance.now() - started) / 1000;
  } finally {
    await store.close();
  }
}

/** The cursors of every page of 200 through the first `deep` agents, walked through the service; the last is the deep page's. */
async function walkCursors(server: ChildServer, deep: number): Promise<string[]> {
  const cursors: string[] = [];
  for (let seen = 0; seen < deep; seen += 200) {
    const url: string = `${server.url}/v1/agents?limit=200${cursors.length > 0 ? `&cursor=${cursors.at(-1)}` : ''}`;
    const page = (await (await fetch(url)).json()) as { next_cursor: string | null };
    if (page.next_cursor === null) throw new Error(`the board ends before ${deep} agents`);
    cursors.push(page.next_cursor);
  }
  return cursors;
}

async function measure(server: ChildServer, o: DirectoryBenchOptions, label: string, requests: Request[]): Promise<Figures> {
  if (o.warmup > 0) await load(server, o.connections, o.warmup, requests);
  const figures = await load(server, o.connections, o.duration, requests);
  if (figures.non2xx > 0 || figures.errors > 0) throw new Error(`${label}: ${figures.non2xx} non-2xx, ${figures.errors} errors (${JSON.stringify(figures.statusCodes)})`);
  return figures;
}

async function benchStore(kind: Kind, o: DirectoryBenchOptions): Promise<{ rows: Row[]; seedSeconds: number; bytes: Record<string, number> }> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  let server: ChildServer | null = null;
  try {
    progress(`${storeName(kind)}: seeding ${o.agents} agents`);
    const seedSeconds = await seedBoard(db, o.agents);
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, { LEDGER_READ_LIMIT_PER_MIN: '1000000000' }));
    const cursors = await walkCursors(server, o.deep);
    const cursor = cursors.at(-1)!;
    const json = { accept: 'application/json' };
    // More distinct pages than the directory keeps built (256): each request of this target builds its page.
    const rotating: Request[] = cursors.flatMap((c) => [50, 51].map((limit) => ({ method: 'GET', path: `/v1/agents?limit=${limit}&cursor=${c}`, headers: json })));
    const targets: { label: string; requests: Request[] }[] = [
      { label: '/v1/agents (first page, 50)', requests: [{ method: 'GET', path: '/v1/agents', headers: json }] },
      { label: `/v1/agents (after ${o.deep}, 50)`, requests: [{ method: 'GET', path: `/v1/agents?cursor=${cursor}`, headers: json }] },
      { label: `/v1/agents (${rotating.length} pages in turn, none kept built)`, requests: rotating },
      { label: '/v1/agents?sort=records&status=active (first page)', requests: [{ method: 'GET', path: '/v1/agents?sort=records&status=active', headers: json }] },
      { label: '/v1/agents?format=csv (first page)', requests: [{ method: 'GET', path: '/v1/agents?format=csv' }] },
      { label: '/agents (page, 50)', requests: [{ method: 'GET', path: '/agents', headers: { accept: 'text/html' } }] },
    ];
    const bytes: Record<string, number> = {};
    for (const t of targets) bytes[t.label] = (await (await fetch(`${server.url}${t.requests[0]!.path}`)).arrayBuffer()).byteLength;
    const rows: Row[] = [];
    for (const t of targets) {
      progress(`${storeName(kind)}: ${t.label} / /healthz`);
      const figures = await measure(server, o, t.label, t.requests);
      const floor = await measure(server, o, '/healthz', [{ method: 'GET', path: '/healthz' }]);
      rows.push({ kind, target: t.label, figures, floor });
    }
    return { rows, seedSeconds, bytes };
  } finally {
    if (server) await server.stop();
    await db.remove();
  }
}

function report(o: DirectoryBenchOptions, rows: Row[], seeds: string[], notes: string[]): string {
  const twin = (r: Row) => rows.find((x) => x.kind === r.kind && x.target.startsWith('/v1/agents (first page'))!;
  const table = markdownTable(
    ['store', 'target', 'req/s', 'p50 ms', 'p99 ms', 'p99 / JSON first page p99', '/healthz p99 ms', 'server CPU ms/req', `p99 < ${GOAL_P99_MS} ms`],
    rows.map((r) => [storeName(r.kind), r.target, fixed(r.figures.rps, 0), fixed(r.figures.p50, 1), fixed(r.figures.p99, 1),
      fixed(r.figures.p99 / Math.max(twin(r).figures.p99, 0.001), 2), fixed(r.floor.p99, 1), r.figures.serverCpuMs === null ? '-' : fixed(r.figures.serverCpuMs, 2),
      r.figures.p99 < GOAL_P99_MS ? 'yes' : 'NO']),
  );
  return [
    `# Directory benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`,
    `Board: ${o.agents} agents (10% demo, 5% synthetic, 3% retired, 20% without a report), seeded as the directory job leaves it. ${seeds.join(' ')}`,
    `Load: autocannon, ${o.connections} keep-alive connections, ${o.warmup} s warm-up then ${o.duration} s per target, the server (startServer, directory job polling) in a child process; each target then /healthz (the loopback floor). The JSON first page is the twin of /agents (the page renders the same listing). No Accept-Encoding.`,
    '',
    table,
    ...(notes.length > 0 ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
}

export async function directoryBench(o: DirectoryBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  const seeds: string[] = [];
  for (const kind of await benchStores(o.postgres, notes)) {
    const result = await benchStore(kind, o);
    rows.push(...result.rows);
    seeds.push(`${storeName(kind)} seeded in ${fixed(result.seedSeconds, 0)} s; bodies ${Object.entries(result.bytes).map(([k, v]) => `${k.split(' ')[0]}${k.includes('csv') ? ' csv' : ''} ${Math.round(v / 1024)} KiB`).join(', ')}.`);
  }
  return report(o, rows, seeds, notes);
}

export function directoryOptions(argv: string[]): DirectoryBenchOptions {
  const values = suiteFlags(argv, {
    agents: { type: 'string', default: '100000' },
    deep: { type: 'string', default: '50000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '4' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    agents: integerFlag('agents', values.agents.replace(/_/g, ''), 1),
    deep: integerFlag('deep', values.deep.replace(/_/g, ''), 200),
    duration: integerFlag('duration', values.duration, 1),
    warmup: integerFlag('warmup', values.warmup, 0),
    connections: integerFlag('connections', values.connections, 1),
    postgres: !values['no-postgres'],
  };
}
