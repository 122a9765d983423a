// The hostile-reader benchmark (issue 24's acceptance), on each store: the real service in a
// child process, an agent of --decisions decisions of about 128 KiB each present, and one agent
// writing at --rate a second. (a) the writer alone; (b) the same writer while one client with
// --connections keep-alive connections cycles over every public read (the API, the outcomes CSV
// at limit 500, the export, the OpenAPI document, llms-full.txt, site pages, badges, chain,
// ledger, proofs, the log). Figures: the writer's p99 in (b) over its p99 in (a), from the same
// run (goal ≤ 2), the server's peak RSS (goal < 512 MB), and the readers' answers by status
// (goal: no 5xx other than the gate's 503). The service is the compiled dist/, as `ledger serve`
// runs it (its RSS is the goal's). The per-minute read limit is lifted, so what holds
// the reader back is the read gate (docs/operations.md, "Bounds on public reads"). Loopback only.
// The reader runs in a process of its own (reader-child.ts), apart from the writer it measures.
// After the seeding the database is settled (databases.ts, `settle`: on PostgreSQL a VACUUM
// ANALYZE and a CHECKPOINT), so that the seeding's aftermath does not land in (a) or (b) at random.
//
//   npm run bench -- hostile [--decisions 1500] [--rate 50] [--seconds 20] [--rounds 1] [--connections 64] [--no-postgres | --no-sqlite] [--no-settle] [--profile <dir>]
import type { Request } from 'autocannon';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, DECISION } from './decision-load.ts';
import { benchPath, fixed, integerFlag, logCaughtUp, markdownTable, progress, quantile, startChild, suiteFlags, type ChildServer } from './harness.ts';

export type HostileBenchOptions = {
  decisions: number; rate: number; seconds: number; rounds: number; connections: number; postgres: boolean; sqlite: boolean; profile: string | null; settle: boolean;
};

export function hostileOptions(argv: string[]): HostileBenchOptions {
  const v = suiteFlags(argv, {
    decisions: { type: 'string', default: '1500' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    connections: { type: 'string', default: '64' },
    'no-postgres': { type: 'boolean', default: false },
    'no-sqlite': { type: 'boolean', default: false },
    'no-settle': { type: 'boolean', default: false },
    profile: { type: 'string' },
  });
  return {
    decisions: integerFlag('decisions', v.decisions, 1), rate: integerFlag('rate', v.rate, 1), seconds: integerFlag('seconds', v.seconds, 1),
    rounds: integerFlag('rounds', v.rounds, 1), connections: integerFlag('connections', v.connections, 1), postgres: !v['no-postgres'], sqlite: !v['no-sqlite'],
    profile: v.profile ?? null, settle: !v['no-settle'],
  };
}

const GOAL_RATIO = 2;
const GOAL_RSS_MB = 512;
/** A decision body just under the service's 128 KiB body limit: its metadata carries the bulk. */
const LARGE_BODY_BYTES = 128 * 1024 - 512;
const SEED_PARALLEL = 8;

type Kind = BenchDatabase['kind'];
type Agent = { handle: string; secret: string };

function largeDecision(i: number): string {
  const base = JSON.stringify({ ...DECISION, symbol: ['AAPL', 'MSFT', 'NVDA', 'SPY'][i % 4], quantity: String(1 + (i % 50)), metadata: { blob: '' } });
  return base.replace('"blob":""', `"blob":"${'x'.repeat(LARGE_BODY_BYTES - base.length)}"`);
}

function post(server: ChildServer, agent: Agent, body: string, key: string): Promise<Response> {
  return fetch(`${server.url}/v1/decisions`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.secret}`, 'idempotency-key': key },
  });
}

/** Records `count` large decisions for `agent` through the service, a few at a time; returns some of their ids. */
async function seedWhale(server: ChildServer, agent: Agent, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await post(server, agent, largeDecision(i), `${tag}-${i}`);
      const text = await res.text();
      if (res.status !== 201) throw new Error(`seeding: decision ${i} answered ${res.status}: ${text.slice(0, 200)}`);
      if (i % 50 === 0) ids.push((JSON.parse(text) as { id: string }).id);
      if ((i + 1) % 250 === 0) progress(`seeded ${i + 1} / ${count}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_PARALLEL }, worker));
  return ids;
}

type Writes = { latencies: number[]; failed: Record<string, number> };

/** Writes paced at `rate`/s for `seconds`; each 201's latency (ms) and the other answers by status ('no answer': the request failed). */
async function pacedWrites(server: ChildServer, agent: Agent, rate: number, seconds: number, tag: string): Promise<Writes> {
  const latencies: number[] = [];
  const failed: Record<string, number> = {};
  const fail = (status: string) => void (failed[status] = (failed[status] ?? 0) + 1);
  const body = JSON.stringify(DECISION);
  const writes: Promise<void>[] = [];
  const begin = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = begin + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    writes.push(post(server, agent, body, `${tag}-${i}`).then(async (res) => {
      await res.arrayBuffer();
      if (res.status === 201) latencies.push(performance.now() - sent);
      else fail(String(res.status));
    }, () => fail('no answer')));
  }
  await Promise.all(writes);
  return { latencies: latencies.sort((a, b) => a - b), failed };
}

/** Every public read, as the hostile client cycles over them. */
function publicReads(whale: string, ids: string[]): Request[] {
  const id = (i: number) => ids[i % ids.length]!;
  const paths = [
    `/v1/agents/${whale}`, `/v1/agents/${whale}/chain`, `/v1/agents/${whale}/chain?after_seq=700`, `/v1/proof/${id(0)}`, `/v1/proof/${id(7)}`,
    '/v1/ledger', `/v1/ledger?agent=${whale}&limit=200`, `/v1/export?agent=${whale}`, '/v1/transparency',
    `/v1/agents/${whale}/performance`, `/v1/agents/${whale}/performance/outcomes?limit=500&format=csv`, `/v1/agents/${whale}/performance/outcomes?limit=500`,
    '/v1/log/checkpoint', '/v1/anchors', '/v1/openapi.json', '/llms.txt', '/llms-full.txt', '/docs/api',
    '/', '/agents', `/agents/${whale}`, `/records/${id(3)}`, '/transparency', '/docs',
    `/badge/${whale}.svg`, `/badge/${whale}.svg?style=return`, `/badge/${whale}.svg?style=verified`,
  ];
  return paths.map((path) => ({ method: 'GET', path, headers: { 'accept-encoding': 'gzip, br' } }));
}

/** The server's resident memory, sampled every 100 ms while `during` runs (MB: the peak). */
async function peakRss<T>(pid: number, during: Promise<T>): Promise<{ value: T; peakMb: number }> {
  let peak = 0;
  const sample = () => {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (kb) peak = Math.max(peak, Number(kb) / 1024);
  };
  sample();
  const timer = setInterval(sample, 100);
  try {
    return { value: await during, peakMb: peak };
  } finally {
    clearInterval(timer);
    sample();
  }
}

/** The server's CPU seconds and its event loop's busy and idle milliseconds while `during` runs. */
type Usage = { cpuSeconds: number; loopActiveMs: number; loopIdleMs: number };

async function usageOf<T>(server: ChildServer, during: Promise<T>): Promise<{ value: T; usage: Usage | null }> {
  const [cpu0, loop0] = [server.cpuSeconds(), await server.eventLoop()];
  const value = await during;
  const [cpu1, loop1] = [server.cpuSeconds(), await server.eventLoop()];
  const usage = cpu0 === null || cpu1 === null || !loop0 || !loop1 ? null
    : { cpuSeconds: cpu1 - cpu0, loopActiveMs: loop1.active - loop0.active, loopIdleMs: loop1.idle - loop0.idle };
  return { value, usage };
}

function addUsage(total: Usage | null, more: Usage | null): Usage | null {
  if (!more) return total;
  if (!total) return more;
  return { cpuSeconds: total.cpuSeconds + more.cpuSeconds, loopActiveMs: total.loopActiveMs + more.loopActiveMs, loopIdleMs: total.loopIdleMs + more.loopIdleMs };
}

/** `1.23 s, loop 45 %`: CPU seconds of the server and its event loop's busy share. */
function usageText(u: Usage | null): string {
  return u ? `${fixed(u.cpuSeconds, 1)} s, loop ${fixed((100 * u.loopActiveMs) / Math.max(1, u.loopActiveMs + u.loopIdleMs), 0)} %` : '?';
}


/** What the reader got: its answers by HTTP status, and the requests that got none. */
type ReaderAnswers = { statusCodes: Record<string, number>; errors: number };

/** The hostile reader in a child process (reader-child.ts), for `seconds`. */
async function hostileReader(server: ChildServer, connections: number, seconds: number, requests: Request[]): Promise<ReaderAnswers> {
  const child = spawn(process.execPath, ['--import', 'tsx', benchPath('reader-child.ts')], {
    env: { ...process.env, BENCH_READER: JSON.stringify({ url: server.url, connections, seconds, requests }) }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the hostile reader exited with ${code}`);
  return JSON.parse(out) as ReaderAnswers;
}

type Row = {
  kind: Kind; alone: number[]; withReaders: number[]; failedWrites: Record<string, number>; rssAloneMb: number; rssPeakMb: number;
  readers: ReaderAnswers[]; seedSeconds: number; usageAlone: Usage | null; usageReaders: Usage | null;
};

async function run(kind: Kind, o: HostileBenchOptions): Promise<Row> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  let server: ChildServer | null = null;
  try {
    const agents = await createAgents(db.url, 2);
    const writer: Agent = agents[0]!;
    const whale: Agent = agents[1]!;
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, {
      LEDGER_WRITE_LIMIT_PER_MIN: '1000000000', LEDGER_READ_LIMIT_PER_MIN: '1000000000', LEDGER_MARKET_DATA: 'synthetic', BENCH_SERVER_FROM_DIST: '1',
    }), o.profile);
    const tag = `hb${process.pid}-${Date.now().toString(36)}`;
    progress(`${storeName(kind)}: seeding ${o.decisions} decisions of ${fixed(LARGE_BODY_BYTES / 1024, 1)} KiB`);
    const started = performance.now();
    const ids = await seedWhale(server, whale, o.decisions, `${tag}-seed`);
    await logCaughtUp(server);
    const seedSeconds = (performance.now() - started) / 1000;
    if (o.settle) progress(`${storeName(kind)}: settled after the seeding (${await db.settle()})`);
    const row: Row = { kind, alone: [], withReaders: [], failedWrites: {}, rssAloneMb: 0, rssPeakMb: 0, readers: [], seedSeconds, usageAlone: null, usageReaders: null };
    for (let round = 0; round < o.rounds; round++) {
      progress(`${storeName(kind)} round ${round + 1}/${o.rounds}: (a) ${o.rate} writes/s alone for ${o.seconds} s`);
      const aloneUsage = await usageOf(server, peakRss(server.pid, pacedWrites(server, writer, o.rate, o.seconds, `${tag}-a${round}`)));
      const alone = aloneUsage.value;
      progress(`${storeName(kind)} round ${round + 1}/${o.rounds}: (b) the same with ${o.connections} reader connections`);
      const reading = hostileReader(server, o.connections, o.seconds + 2, publicReads(whale.handle, ids));
      await new Promise((r) => setTimeout(r, 1000)); // the readers' connections are open and busy first
      const bothUsage = await usageOf(server, peakRss(server.pid, Promise.all([pacedWrites(server, writer, o.rate, o.seconds, `${tag}-b${round}`), reading])));
      const both = bothUsage.value;
      row.usageAlone = addUsage(row.usageAlone, aloneUsage.usage);
      row.usageReaders = addUsage(row.usageReaders, bothUsage.usage);
      row.alone.push(...alone.value.latencies);
      row.withReaders.push(...both.value[0].latencies);
      for (const [status, n] of [...Object.entries(alone.value.failed), ...Object.entries(both.value[0].failed)]) row.failedWrites[status] = (row.failedWrites[status] ?? 0) + n;
      row.readers.push(both.value[1]);
      row.rssAloneMb = Math.max(row.rssAloneMb, alone.peakMb);
      row.rssPeakMb = Math.max(row.rssPeakMb, both.peakMb);
    }
    row.alone.sort((a, b) => a - b);
    row.withReaders.sort((a, b) => a - b);
    return row;
  } finally {
    await server?.stop();
    await db.remove();
  }
}

function statuses(readers: ReaderAnswers[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of readers) {
    for (const [code, n] of Object.entries(r.statusCodes)) counts[code] = (counts[code] ?? 0) + n;
    if (r.errors > 0) counts['no answer'] = (counts['no answer'] ?? 0) + r.errors;
  }
  return counts;
}

export async function hostileBench(o: HostileBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  for (const kind of await benchStores(o.postgres, notes)) if (kind !== 'sqlite' || o.sqlite) rows.push(await run(kind, o));
  const p99 = (xs: number[]) => quantile(xs, 0.99);
  const table = markdownTable(
    ['store', 'writes alone / with readers', 'write p99 alone ms', 'write p99 with readers ms', `ratio (goal ≤ ${GOAL_RATIO})`, 'non-201 writes',
      `peak RSS MB (goal < ${GOAL_RSS_MB})`, 'RSS alone MB', 'server CPU, event loop busy: alone / with readers', 'reader answers by status', 'reader 500s', 'verdict'],
    rows.map((r) => {
      const ratio = p99(r.withReaders) / Math.max(p99(r.alone), 0.001);
      const byStatus = statuses(r.readers);
      const fiveHundreds = byStatus['500'] ?? 0;
      const failed = Object.entries(r.failedWrites);
      const met = ratio <= GOAL_RATIO && r.rssPeakMb < GOAL_RSS_MB && fiveHundreds === 0 && failed.length === 0;
      return [storeName(r.kind), `${r.alone.length} / ${r.withReaders.length}`, fixed(p99(r.alone), 1), fixed(p99(r.withReaders), 1), fixed(ratio, 2), failed.length === 0 ? '0' : failed.map(([c, n]) => `${c}: ${n}`).join(', '),
        fixed(r.rssPeakMb, 0), fixed(r.rssAloneMb, 0), `${usageText(r.usageAlone)} / ${usageText(r.usageReaders)}`, Object.entries(byStatus).map(([c, n]) => `${c}: ${n}`).join(', '), String(fiveHundreds), met ? 'met' : 'MISSED'];
    }),
  );
  const tail = (xs: number[]) => [0.5, 0.9, 0.99, 1].map((q) => fixed(quantile(xs, q), 1)).join(' / ');
  const tails = rows.map((r) => `${storeName(r.kind)}: alone ${tail(r.alone)}, with readers ${tail(r.withReaders)}`);
  return [
    `# hostile-reader benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average at the end ${loadavg().map((l) => fixed(l, 1)).join(' ')}.`,
    `Ledger: one agent with ${o.decisions} decisions of ${fixed(LARGE_BODY_BYTES / 1024, 1)} KiB each (seeded through the service; ${rows.map((r) => `${storeName(r.kind)} ${fixed(r.seedSeconds, 0)} s`).join(', ')}, the log caught up${o.settle ? ', the database settled' : ''} before measuring).`,
    `Load: one writer agent at ${o.rate} writes/s for ${o.seconds} s alone (a), then again (b) while one client (autocannon, ${o.connections} keep-alive connections, accepting gzip and br) cycles over ${publicReads('h', ['r']).length} public reads; ${o.rounds} round(s) of (a) then (b). Server (the compiled dist/) and reader each in a child process, defaults except the per-minute limits (lifted). Write latency is as the writer sees it over loopback.`,
    '',
    table,
    '',
    `The writes' latency, p50 / p90 / p99 / max ms: ${tails.join('; ')}.`,
    '',
    'Goals (issue 24): ratio ≤ 2, peak RSS < 512 MB, no reader 500. A 429 is the reader\'s own bound (per client), a 503 the service\'s (read gate), both with Retry-After.',
    ...(notes.length > 0 ? ['', ...notes] : []),
  ].join('\n');
}
