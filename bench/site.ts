// The public site's benchmark: server time of the HTML pages (`/`, an agent page, a record page,
// /transparency) at a ledger of --records records (default 1,000,000), on SQLite and PostgreSQL,
// against the real service in a child process; each page beside its JSON twin (the same use
// case as JSON: /v1/ledger, /v1/agents/{h}, /v1/proof/{id}, /v1/transparency) and /healthz (the
// HTTP floor), measured in the same run, interleaved. Goal: p99 under 50 ms for `/` and an agent page.
//
//   npm run bench -- site [--records 1000000] [--duration 10] [--warmup 2] [--connections 4] [--no-postgres]
import { cpus, loadavg } from 'node:os';
import type { Request } from 'autocannon';
import { openStore } from '../src/store/open.ts';
import { benchPath, fixed, integerFlag, load, markdownTable, progress, startChild, suiteFlags, type ChildServer, type Figures } from './harness.ts';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { seed } from './seed.ts';

export type SiteBenchOptions = { records: number; duration: number; warmup: number; connections: number; postgres: boolean };

const GOAL_P99_MS = 50;
const SMALL_AGENTS = 20;
const PER_SMALL = 50;

type Kind = BenchDatabase['kind'];
type Row = { kind: Kind; page: string; twin: string; page99: Figures; twin99: Figures; floor: Figures; goal: boolean };

type Sample = { whale: string; recordIds: string[]; seedSeconds: number };

async function seedDatabase(db: BenchDatabase, size: number): Promise<Sample> {
  const store = openStore(db.url);
  try {
    await store.migrate();
    const started = performance.now();
    let reported = 0;
    const seeded = await seed(store, db.url, {
      whale: size, smallAgents: SMALL_AGENTS, perSmall: PER_SMALL, handlePrefix: 'bench', signedEvery: 10,
      onProgress: (written, total) => {
        if (written - reported >= 100_000 || written === total) {
          progress(`${storeName(db.kind)}: seeded ${written} / ${total}`);
          reported = written;
        }
      },
    });
    const seedSeconds = (performance.now() - started) / 1000;
    const recordIds: string[] = [];
    for (let i = 0; i < 200; i++) {
      const [r] = await store.listChain(seeded.whale.agentId, Math.floor(Math.random() * size), 1);
      if (r) recordIds.push(r.id);
    }
    return { whale: seeded.whale.handle, recordIds, seedSeconds };
  } finally {
    await store.close();
  }
}

/** Each page, its JSON twin, and whether the 50 ms goal applies to it. */
function pairs(s: Sample): { page: string; twin: string; goal: boolean; requests: (html: boolean) => Request[] }[] {
  const html = { accept: 'text/html' };
  const get = (paths: string[], asHtml: boolean): Request[] => paths.map((path) => ({ method: 'GET', path, headers: asHtml ? html : { accept: 'application/json' } }));
  return [
    { page: '/', twin: '/v1/ledger?limit=20', goal: true, requests: (h) => get([h ? '/' : '/v1/ledger?limit=20'], h) },
    { page: '/agents/{h}', twin: '/v1/agents/{h}', goal: true, requests: (h) => get([h ? `/agents/${s.whale}` : `/v1/agents/${s.whale}`], h) },
    { page: '/records/{id}', twin: '/v1/proof/{id}', goal: false, requests: (h) => get(s.recordIds.map((id) => (h ? `/records/${id}` : `/v1/proof/${id}`)), h) },
    { page: '/transparency', twin: '/v1/transparency', goal: false, requests: (h) => get([h ? '/transparency' : '/v1/transparency'], h) },
  ];
}

async function measure(server: ChildServer, o: SiteBenchOptions, label: string, requests: Request[]): Promise<Figures> {
  if (o.warmup > 0) await load(server, o.connections, o.warmup, requests);
  const figures = await load(server, o.connections, o.duration, requests);
  if (figures.non2xx > 0 || figures.errors > 0) throw new Error(`${label}: ${figures.non2xx} non-2xx, ${figures.errors} errors (${JSON.stringify(figures.statusCodes)})`);
  return figures;
}

/** Waits until the global log holds every record (seconds waited). */
async function logCaughtUp(server: ChildServer): Promise<number> {
  const started = performance.now();
  for (;;) {
    const doc = (await (await fetch(`${server.url}/v1/transparency`)).json()) as { counts: { records: number }; log: { tree_size: number } };
    if (doc.log.tree_size >= doc.counts.records) return (performance.now() - started) / 1000;
    if (performance.now() - started > 30 * 60_000) throw new Error(`the log holds ${doc.log.tree_size} of ${doc.counts.records} records after 30 minutes`);
    progress(`log: ${doc.log.tree_size} / ${doc.counts.records} integrated`);
    await new Promise((r) => setTimeout(r, 5000));
  }
}

async function benchStore(kind: Kind, o: SiteBenchOptions): Promise<{ rows: Row[]; seedSeconds: number; logSeconds: number }> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  let server: ChildServer | null = null;
  try {
    progress(`${storeName(kind)} ${o.records}: seeding`);
    const sample = await seedDatabase(db, o.records);
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, { LEDGER_READ_LIMIT_PER_MIN: '1000000000' }));
    // The service integrates every seeded record into the global log when it starts; pages are
    // measured in the steady state after that, not while the integrator competes for the CPU.
    const logSeconds = await logCaughtUp(server);
    const rows: Row[] = [];
    for (const p of pairs(sample)) {
      progress(`${storeName(kind)}: ${p.page} / ${p.twin} / /healthz`);
      // Interleaved: page, twin, floor, so drift on the machine lands on all three alike.
      const page99 = await measure(server, o, p.page, p.requests(true));
      const twin99 = await measure(server, o, p.twin, p.requests(false));
      const floor = await measure(server, o, '/healthz', [{ method: 'GET', path: '/healthz' }]);
      rows.push({ kind, page: p.page, twin: p.twin, page99, twin99, floor, goal: p.goal });
    }
    return { rows, seedSeconds: sample.seedSeconds, logSeconds };
  } finally {
    if (server) await server.stop();
    await db.remove();
  }
}

function report(o: SiteBenchOptions, rows: Row[], seeds: string[], notes: string[]): string {
  const table = markdownTable(
    ['store', 'page', 'req/s', 'p50 ms', 'p99 ms', 'twin', 'twin p99 ms', 'page / twin p99', '/healthz p99 ms', `p99 < ${GOAL_P99_MS} ms`],
    rows.map((r) => [storeName(r.kind), r.page, fixed(r.page99.rps, 0), fixed(r.page99.p50, 1), fixed(r.page99.p99, 1), r.twin,
      fixed(r.twin99.p99, 1), fixed(r.page99.p99 / Math.max(r.twin99.p99, 0.001), 2), fixed(r.floor.p99, 1),
      r.goal ? (r.page99.p99 < GOAL_P99_MS ? 'yes' : 'NO') : 'n/a']),
  );
  return [
    `# Site benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`,
    `Ledger: ${o.records} records of one agent (every 10th agent-signed), plus ${SMALL_AGENTS * PER_SMALL} of ${SMALL_AGENTS} small agents (bench/seed.ts). ${seeds.join(' ')}`,
    `Load: autocannon, ${o.connections} keep-alive connections, ${o.warmup} s warm-up then ${o.duration} s per target, server in a child process; page, JSON twin and /healthz measured one after the other for each page. Latency is as the client sees it over loopback (server time plus a loopback round trip; /healthz is that floor). Record pages and proofs rotate over 200 random records. No Accept-Encoding: bodies uncompressed.`,
    '',
    table,
    ...(notes.length > 0 ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
}

export async function siteBench(o: SiteBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  const seeds: string[] = [];
  for (const kind of await benchStores(o.postgres, notes)) {
    const result = await benchStore(kind, o);
    rows.push(...result.rows);
    seeds.push(`${storeName(kind)} seeded in ${fixed(result.seedSeconds, 0)} s, integrated into the global log by the service in ${fixed(result.logSeconds, 0)} s before measuring.`);
  }
  return report(o, rows, seeds, notes);
}

export function siteOptions(argv: string[]): SiteBenchOptions {
  const values = suiteFlags(argv, {
    records: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '4' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    records: integerFlag('records', values.records.replace(/_/g, ''), 1),
    duration: integerFlag('duration', values.duration, 1),
    warmup: integerFlag('warmup', values.warmup, 0),
    connections: integerFlag('connections', values.connections, 1),
    postgres: !values['no-postgres'],
  };
}
