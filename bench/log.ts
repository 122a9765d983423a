// The global-log benchmark (issue 12), on SQLite and PostgreSQL:
// (a) integration: the real integrator (Integrator.integratePending, batches of 256) over a
//     store seeded with N records, in leaves a second, as a ratio to the SHA-256 leaf hashes of
//     the same leaf bytes alone, timed in the same run;
// (b) checkpoint latency: the real service (child process, its own integrator running) takes
//     unsigned writes at a steady rate; for each 201, the time until a signed checkpoint covers
//     the record. The checkpoint is polled every 10 ms (GET /v1/log/checkpoint, the time each tree
//     size was first seen) and each record's log_index is read once afterwards from
//     GET /v1/log/proof/inclusion, so the polling itself does not load the service;
// (c) GET /v1/log/proof/inclusion p50/p99 at each seeded size, once the service has integrated it.
//
//   npm run bench -- log [--records 10000,100000] [--rate 200] [--seconds 30] [--duration 10]
//     [--connections 4] [--no-postgres]
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { leafHash } from '../src/core/merkle.ts';
import { Integrator, leafData } from '../src/log/integrator.ts';
import { loadLogKey, type LogKey } from '../src/log/key.ts';
import { openStore } from '../src/store/open.ts';
import type { LogStore } from '../src/log/port.ts';
import type { LedgerStore } from '../src/store/port.ts';
import { freshPostgres, freshSqlite, benchStores, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, DECISION } from './decision-load.ts';
import { benchPath, fixed, integerFlag, load, markdownTable, progress, quantile, startChild, suiteFlags, type ChildServer, type Figures } from './harness.ts';
import { seed } from './seed.ts';
import { decisionRate } from './service-rate.ts';

export type LogBenchOptions = {
  records: number[];
  rate: number;
  seconds: number;
  duration: number;
  connections: number;
  postgres: boolean;
};

/** Targets from issue 12. */
const GOAL = { checkpointP99Ms: 1000, integrationOverWrites: 10, proofP99Ms: 20 };
const ORIGIN = 'bench.local/log';

export function logOptions(argv: string[]): LogBenchOptions {
  const v = suiteFlags(argv, {
    records: { type: 'string', default: '10000,100000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '4' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    records: v.records.split(',').map((s) => integerFlag('records', s.trim(), 1)),
    rate: integerFlag('rate', v.rate, 1),
    seconds: integerFlag('seconds', v.seconds, 1),
    duration: integerFlag('duration', v.duration, 1),
    connections: integerFlag('connections', v.connections, 1),
    postgres: !v['no-postgres'],
  };
}

type Kind = BenchDatabase['kind'];
type IntegrationRow = { kind: Kind; size: number; seedSeconds: number; seconds: number; rate: number; hashRate: number; spent: Spent; leafBytesMs: number };

/** Where the integrator's time went, in ms: the store calls and the checkpoint signatures it made. */
type Spent = { pending: number; integrate: number; tiles: number; sign: number };

/**
 * The store's log and the log key, with every call the integrator makes through them timed; what
 * is left of its time is its own work (leaf bytes, leaf and node hashes, tiles, checkpoint text).
 */
function timedLog(log: LogStore, key: LogKey, spent: Spent): { log: LogStore; key: LogKey } {
  const timed = <A extends unknown[], R>(part: keyof Spent, f: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
    const started = performance.now();
    try {
      return await f(...a);
    } finally {
      spent[part] += performance.now() - started;
    }
  };
  return {
    log: {
      latestCheckpoint: () => log.latestCheckpoint(),
      checkpointAt: (size) => log.checkpointAt(size),
      tiles: timed('tiles', (ids: Parameters<LogStore['tiles']>[0]) => log.tiles(ids)),
      leafOf: (id) => log.leafOf(id),
      entries: (start, count) => log.entries(start, count),
      tryIntegrator: async () => {
        const session = await log.tryIntegrator();
        return session && {
          lastSortKey: () => session.lastSortKey(),
          countPending: (after, limit) => session.countPending(after, limit),
          pending: timed('pending', (after: string | null, limit: number) => session.pending(after, limit)),
          integrate: timed('integrate', (size: number, batch: Parameters<typeof session.integrate>[1]) => session.integrate(size, batch)),
          release: () => session.release(),
        };
      },
    },
    key: {
      ...key,
      sign: (message) => {
        const started = performance.now();
        try {
          return key.sign(message);
        } finally {
          spent.sign += performance.now() - started;
        }
      },
    },
  };
}
type ProofRow = { kind: Kind; size: number; figures: Figures; checkpoint: Figures };
type LatencyRow = { kind: Kind; writes: number; rate: number; p50: number; p99: number; max: number; missing: number; non201: number };

/** A log key of its own, in a temp directory the service is then pointed at (LEDGER_LOG_KEY_FILE). */
async function benchKey(): Promise<{ key: LogKey; file: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-logkey-'));
  const loaded = await loadLogKey({ keyFile: null, dataDir: dir, origin: ORIGIN });
  if (!loaded.ok) throw new Error(loaded.error);
  return { key: loaded.value.key, file: loaded.value.source.path, dir };
}

const serverEnv = (db: BenchDatabase, keyFile: string) =>
  serviceEnv(db.url, { LEDGER_LOG_KEY_FILE: keyFile, LEDGER_LOG_ORIGIN: ORIGIN, LEDGER_READ_LIMIT_PER_MIN: '1000000000', LEDGER_WRITE_LIMIT_PER_MIN: '1000000000' });

/** Every leaf's bytes, read back in log order after integration, and the ms spent making them from the records. */
async function leafBytes(store: LedgerStore, size: number): Promise<{ leaves: Uint8Array[]; ms: number }> {
  const leaves: Uint8Array[] = [];
  let ms = 0;
  for (let start = 0; start < size; start += 10_000) {
    const records = await store.log.entries(start, Math.min(10_000, size - start));
    const started = performance.now();
    for (const r of records) leaves.push(leafData(r));
    ms += performance.now() - started;
  }
  return { leaves, ms };
}

/** SHA-256 leaf hashes of `leaves`, best of three passes, in leaves a second. */
function hashRate(leaves: Uint8Array[]): number {
  let best = Infinity;
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const l of leaves) leafHash(l);
    best = Math.min(best, performance.now() - started);
  }
  return leaves.length / (best / 1000);
}

/** Seeds `size` records, integrates them in this process, and measures the hashing baseline. */
async function integrate(db: BenchDatabase, size: number, key: LogKey): Promise<IntegrationRow> {
  const store = openStore(db.url);
  try {
    await store.migrate();
    progress(`${storeName(db.kind)} ${size}: seeding`);
    let started = performance.now();
    const seeded = await seed(store, db.url, { whale: size, smallAgents: 0, perSmall: 0, handlePrefix: 'logbench' });
    const seedSeconds = (performance.now() - started) / 1000;
    progress(`${storeName(db.kind)} ${size}: integrating`);
    const spent: Spent = { pending: 0, integrate: 0, tiles: 0, sign: 0 };
    const timed = timedLog(store.log, key, spent);
    const integrator = new Integrator({ log: timed.log, key: timed.key });
    started = performance.now();
    const integrated = await integrator.integratePending();
    const seconds = (performance.now() - started) / 1000;
    await integrator.stop();
    if (integrated !== seeded.total) throw new Error(`integrated ${integrated} of ${seeded.total} records`);
    const leaves = await leafBytes(store, size);
    return { kind: db.kind, size, seedSeconds, seconds, rate: size / seconds, hashRate: hashRate(leaves.leaves), spent, leafBytesMs: leaves.ms };
  } finally {
    await store.close();
  }
}

async function treeSize(server: ChildServer): Promise<number> {
  const res = await fetch(`${server.url}/v1/log/checkpoint`);
  if (res.status !== 200) return 0;
  return Number((await res.text()).split('\n')[1]);
}

async function proofReads(server: ChildServer, db: BenchDatabase, size: number, o: LogBenchOptions): Promise<ProofRow> {
  const store = openStore(db.url);
  const ids: string[] = [];
  try {
    for (let i = 0; i < 500; i++) {
      const [r] = await store.log.entries(Math.floor(Math.random() * size), 1);
      if (r) ids.push(r.id);
    }
  } finally {
    await store.close();
  }
  const requests = (): Request[] => ids.map((id) => ({ method: 'GET', path: `/v1/log/proof/inclusion?record_id=${id}` }));
  // The baseline: the cheapest log read (one indexed row, no hashing), same load, same server.
  const checkpointReads = (): Request[] => [{ method: 'GET', path: '/v1/log/checkpoint' }];
  const measure = async (label: string, make: () => Request[]) => {
    progress(`${storeName(db.kind)} ${size}: ${label}`);
    await load(server, o.connections, 2, make());
    const f = await load(server, o.connections, o.duration, make());
    if (f.non2xx > 0 || f.errors > 0) throw new Error(`${label}: ${f.non2xx} non-2xx, ${f.errors} errors (${JSON.stringify(f.statusCodes)})`);
    return f;
  };
  const checkpoint = await measure('GET /v1/log/checkpoint', checkpointReads);
  const figures = await measure('GET /v1/log/proof/inclusion', requests);
  return { kind: db.kind, size, figures, checkpoint };
}

/** (a) and (c) at one size. */
async function sizedRun(kind: Kind, size: number, o: LogBenchOptions): Promise<{ integration: IntegrationRow; proofs: ProofRow }> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const key = await benchKey();
  let server: ChildServer | null = null;
  try {
    const integration = await integrate(db, size, key.key);
    server = await startChild(benchPath('server-under-test.ts'), serverEnv(db, key.file));
    if ((await treeSize(server)) !== size) throw new Error(`the service's checkpoint does not cover the ${size} integrated records`);
    const proofs = await proofReads(server, db, size, o);
    return { integration, proofs };
  } finally {
    await server?.stop();
    await db.remove();
    rmSync(key.dir, { recursive: true, force: true });
  }
}

/** (b): steady writes; each 201's time until a checkpoint covers its record. */
async function checkpointLatency(kind: Kind, o: LogBenchOptions): Promise<LatencyRow> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const key = await benchKey();
  let server: ChildServer | null = null;
  try {
    const agents = await createAgents(db.url, 20);
    server = await startChild(benchPath('server-under-test.ts'), serverEnv(db, key.file));
    const url = server.url;
    progress(`${storeName(kind)}: ${o.rate} writes/s for ${o.seconds} s, checkpoint polled every 10 ms`);
    // Tree sizes as first seen, in order: sizes[i] was first seen at seenAt[i].
    const sizes: number[] = [];
    const seenAt: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const size = await treeSize(server!);
        if (sizes.length === 0 || size > sizes[sizes.length - 1]!) {
          sizes.push(size);
          seenAt.push(performance.now());
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const acked: { id: string; at: number }[] = [];
    let non201 = 0;
    const body = JSON.stringify(DECISION);
    const tag = `lb${process.pid}-${Date.now().toString(36)}`;
    const writes: Promise<void>[] = [];
    const total = o.rate * o.seconds;
    const begin = performance.now();
    for (let i = 0; i < total; i++) {
      const due = begin + (i * 1000) / o.rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const agent = agents[i % agents.length]!;
      writes.push(fetch(`${url}/v1/decisions`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.secret}`, 'idempotency-key': `${tag}-${i}` },
      }).then(async (res) => {
        const at = performance.now();
        const text = await res.text();
        if (res.status !== 201) return void non201++;
        acked.push({ id: (JSON.parse(text) as { id: string }).id, at });
      }));
    }
    await Promise.all(writes);
    const achieved = acked.length / ((performance.now() - begin) / 1000);
    // Wait until every acknowledged record is covered (or 10 s), then stop polling.
    const deadline = performance.now() + 10_000;
    const indexes = new Map<string, number>();
    let missing = 0;
    while (performance.now() < deadline && (sizes[sizes.length - 1] ?? 0) < acked.length) await new Promise((r) => setTimeout(r, 50));
    polling = false;
    await poller;
    for (const a of acked) {
      const res = await fetch(`${url}/v1/log/proof/inclusion?record_id=${a.id}`);
      if (res.status === 200) indexes.set(a.id, ((await res.json()) as { log_index: number }).log_index);
      else missing++;
    }
    const latencies: number[] = [];
    for (const a of acked) {
      const index = indexes.get(a.id);
      if (index === undefined) continue;
      const j = sizes.findIndex((s) => s > index);
      if (j >= 0) latencies.push(Math.max(0, seenAt[j]! - a.at));
    }
    latencies.sort((x, y) => x - y);
    return { kind, writes: acked.length, rate: achieved, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies[latencies.length - 1] ?? 0, missing, non201 };
  } finally {
    await server?.stop();
    await db.remove();
    rmSync(key.dir, { recursive: true, force: true });
  }
}

export async function logBench(o: LogBenchOptions): Promise<string> {
  const notes: string[] = [];
  const kinds = await benchStores(o.postgres, notes);
  const integration: IntegrationRow[] = [];
  const proofs: ProofRow[] = [];
  const latency: LatencyRow[] = [];
  const writeRates = new Map<Kind, number>();
  for (const kind of kinds) {
    writeRates.set(kind, await decisionRate(kind, 64, o.duration));
    latency.push(await checkpointLatency(kind, o));
    for (const size of o.records) {
      const r = await sizedRun(kind, size, o);
      integration.push(r.integration);
      proofs.push(r.proofs);
    }
  }
  return report(o, integration, proofs, latency, writeRates, notes);
}

function report(o: LogBenchOptions, integration: IntegrationRow[], proofs: ProofRow[], latency: LatencyRow[], writeRates: Map<Kind, number>, notes: string[]): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
  return [
    `# log benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg().map((l) => fixed(l, 1)).join(' ')}.`,
    '',
    '## (a) Integration: leaves a second, against SHA-256 of the same leaf bytes',
    '',
    markdownTable(['store', 'records', 'seeded in s', 'integrated in s', 'leaves/s', 'SHA-256 leaves/s', 'ratio', 'service writes/s', '× writes', `≥ ${GOAL.integrationOverWrites}×`],
      integration.map((r) => {
        const writes = writeRates.get(r.kind)!;
        return [storeName(r.kind), n(r.size), fixed(r.seedSeconds, 1), fixed(r.seconds, 2), n(r.rate), n(r.hashRate), fixed(r.rate / r.hashRate, 3),
          n(writes), fixed(r.rate / writes, 1), verdict(r.rate / writes >= GOAL.integrationOverWrites)];
      })),
    '',
    'Where the integrator\'s time went (share of the integration time): reading the waiting records, the one-transaction write, reading partial tiles, signing checkpoints, and the rest (leaf bytes, hashing, tree edge, tiles, checkpoint text); leaf bytes (canon_v1 of each chain entry) and leaf SHA-256 timed apart after the run, over the same records:',
    '',
    markdownTable(['store', 'records', 'batches', 'read records', 'write batch', 'read tiles', 'sign', 'the rest', 'of it: leaf bytes', 'of it: leaf SHA-256'],
      integration.map((r) => {
        const total = r.seconds * 1000;
        const share = (ms: number) => `${fixed((100 * ms) / total, 0)}%`;
        const { pending, integrate, tiles, sign } = r.spent;
        return [storeName(r.kind), n(r.size), n(Math.ceil(r.size / 256)), share(pending), share(integrate), share(tiles), share(sign), share(total - pending - integrate - tiles - sign),
          `~${share(r.leafBytesMs)}`, `~${share((1000 * r.size) / r.hashRate)}`];
      })),
    '',
    `The real integrator in this process (\`integratePending\`, batches of 256: read, leaf hashes, tree edge, tiles, a signed checkpoint, one transaction each). ` +
    `Goal: at least ${GOAL.integrationOverWrites}× the service's sustained write rate, measured in the same run (unsigned POST /v1/decisions, 64 connections, ${o.duration} s, fresh store).`,
    '',
    `## (b) From a 201 to a signed checkpoint covering the record (${o.rate} writes/s for ${o.seconds} s)`,
    '',
    markdownTable(['store', 'writes acked', 'writes/s', 'p50 ms', 'p99 ms', 'max ms', 'not covered', 'non-201', `p99 < ${GOAL.checkpointP99Ms} ms`],
      latency.map((r) => [storeName(r.kind), n(r.writes), fixed(r.rate, 1), fixed(r.p50, 0), fixed(r.p99, 0), fixed(r.max, 0), String(r.missing), String(r.non201), verdict(r.p99 < GOAL.checkpointP99Ms && r.missing === 0)])),
    '',
    'The checkpoint is polled every 10 ms, so a figure is up to ~10 ms late; the integrator closes a batch at 256 records or 250 ms after it first saw one waiting, and polls every 25 ms.',
    '',
    `## (c) GET /v1/log/proof/inclusion (${o.connections} connections, ${o.duration} s)`,
    '',
    markdownTable(['store', 'records', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', `p99 < ${GOAL.proofP99Ms} ms`, 'checkpoint req/s', 'checkpoint p50 / p99 ms', 'proof / checkpoint req/s'],
      proofs.map((r) => [storeName(r.kind), n(r.size), n(r.figures.rps), fixed(r.figures.p50, 2), fixed(r.figures.p99, 2), r.figures.serverCpuMs === null ? '?' : fixed(r.figures.serverCpuMs, 3),
        verdict(r.figures.p99 < GOAL.proofP99Ms), n(r.checkpoint.rps), `${fixed(r.checkpoint.p50, 2)} / ${fixed(r.checkpoint.p99, 2)}`, fixed(r.figures.rps / r.checkpoint.rps, 2)])),
    '',
    'Baseline: GET /v1/log/checkpoint (one indexed row, no hashing) on the same server under the same load just before; a p99 both share is the machine\'s.',
    '',
    ...notes,
  ].join('\n');
}
