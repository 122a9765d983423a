// The witnessing benchmark (issue 26), on SQLite and PostgreSQL: the real service (child process,
// its integrator and witnessing job running, LEDGER_WITNESS_POLICY naming two `ledger witness`
// servers, each a child process of its own on loopback, quorum: both) takes unsigned writes at a
// steady rate. For each 201: the time until a signed checkpoint covers the record (the baseline,
// the log alone) and the time until a checkpoint covering it carries both witnesses' cosignatures.
// Both are read from the same poll of GET /v1/log/checkpoint every 20 ms, so they are late alike;
// a cosigned checkpoint replaced by a newer one between two polls counts from the newer one's
// cosigned sighting (the figure can only be too high).
//
//   npm run bench -- witness [--rate 200] [--seconds 30] [--no-postgres]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLogKey } from '../src/log/key.ts';
import { loadWitnessKey } from '../src/witness/key.ts';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, DECISION } from './decision-load.ts';
import { benchPath, fixed, integerFlag, markdownTable, progress, quantile, startChild, suiteFlags, type ChildServer } from './harness.ts';

export type WitnessBenchOptions = { rate: number; seconds: number; postgres: boolean };

/** Issue 26: 201 -> checkpoint cosigned by two local witnesses, p99 under 2 s at 200 writes/s. */
const GOAL_P99_MS = 2000;
const ORIGIN = 'bench.local/log';
const POLL_MS = 20;

export function witnessOptions(argv: string[]): WitnessBenchOptions {
  const v = suiteFlags(argv, {
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return { rate: integerFlag('rate', v.rate, 1), seconds: integerFlag('seconds', v.seconds, 1), postgres: !v['no-postgres'] };
}

type Row = {
  kind: BenchDatabase['kind']; writes: number; rate: number; non201: number; writeP99: number;
  signed: { p50: number; p99: number; max: number }; cosigned: { p50: number; p99: number; max: number }; notCosigned: number;
};

type Seen = { size: number; at: number }[];

/** The first time each size was seen, and the time a record of log index `i` was first covered. */
function coveredAt(seen: Seen, index: number): number | null {
  return seen.find((s) => s.size > index)?.at ?? null;
}

function figures(latencies: number[]) {
  latencies.sort((a, b) => a - b);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies[latencies.length - 1] ?? 0 };
}

/** Two witnesses (child processes) that list the log's vkey; their policy file. */
async function startWitnesses(logVkey: string, dir: string): Promise<{ servers: ChildServer[]; policyFile: string }> {
  const logs = join(dir, 'logs.txt');
  writeFileSync(logs, `logs/v0\nvkey ${logVkey}\n`);
  const servers: ChildServer[] = [];
  const lines: string[] = [];
  for (const name of ['w1', 'w2']) {
    const data = join(dir, name);
    const key = await loadWitnessKey(data, `bench.local/${name}`);
    if (!key.ok) throw new Error(key.error);
    const server = await startChild(benchPath('witness-child.ts'), { BENCH_WITNESS_LOGS: logs, BENCH_WITNESS_DIR: data, BENCH_WITNESS_NAME: `bench.local/${name}` });
    servers.push(server);
    lines.push(`witness ${name} ${key.value.key.vkey} ${server.url}`);
  }
  const policyFile = join(dir, 'policy.txt');
  writeFileSync(policyFile, `${lines.join('\n')}\ngroup both all w1 w2\nquorum both\n`);
  return { servers, policyFile };
}

async function run(kind: BenchDatabase['kind'], o: WitnessBenchOptions): Promise<Row> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-witness-'));
  const servers: ChildServer[] = [];
  try {
    const logKey = await loadLogKey({ keyFile: null, dataDir: dir, origin: ORIGIN });
    if (!logKey.ok) throw new Error(logKey.error);
    const witnesses = await startWitnesses(logKey.value.key.vkey, dir);
    servers.push(...witnesses.servers);
    const agents = await createAgents(db.url, 20);
    const server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, {
      LEDGER_LOG_KEY_FILE: logKey.value.source.path, LEDGER_LOG_ORIGIN: ORIGIN, LEDGER_WITNESS_POLICY: witnesses.policyFile,
      LEDGER_MASTER_KEY: randomBytes(32).toString('base64'),
      LEDGER_READ_LIMIT_PER_MIN: '1000000000', LEDGER_WRITE_LIMIT_PER_MIN: '1000000000',
    }));
    servers.push(server);
    progress(`${storeName(kind)}: ${o.rate} writes/s for ${o.seconds} s, two witnesses, the checkpoint polled every ${POLL_MS} ms`);
    const signed: Seen = [];
    const cosigned: Seen = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const note = await fetch(`${server.url}/v1/log/checkpoint`).then((r) => (r.status === 200 ? r.text() : null), () => null);
        const at = performance.now();
        if (note) {
          const size = Number(note.split('\n')[1]);
          const both = ['w1', 'w2'].every((w) => note.includes(`\n\u2014 bench.local/${w} `));
          if (size > (signed.at(-1)?.size ?? 0)) signed.push({ size, at });
          if (both && size > (cosigned.at(-1)?.size ?? 0)) cosigned.push({ size, at });
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    const acked: { id: string; at: number; ms: number }[] = [];
    let non201 = 0;
    const body = JSON.stringify(DECISION);
    const tag = `wb${process.pid}-${Date.now().toString(36)}`;
    const writes: Promise<void>[] = [];
    const total = o.rate * o.seconds;
    const begin = performance.now();
    for (let i = 0; i < total; i++) {
      const due = begin + (i * 1000) / o.rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const agent = agents[i % agents.length]!;
      const sent = performance.now();
      writes.push(fetch(`${server.url}/v1/decisions`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.secret}`, 'idempotency-key': `${tag}-${i}` },
      }).then(async (res) => {
        const at = performance.now();
        const text = await res.text();
        if (res.status !== 201) return void non201++;
        acked.push({ id: (JSON.parse(text) as { id: string }).id, at, ms: at - sent });
      }, () => void non201++)); // no answer (a reset connection) counts as a failed write
    }
    await Promise.all(writes);
    const rate = acked.length / ((performance.now() - begin) / 1000);
    const deadline = performance.now() + 15_000;
    while (performance.now() < deadline && (cosigned.at(-1)?.size ?? 0) < acked.length) await new Promise((r) => setTimeout(r, 50));
    polling = false;
    await poller;
    const toSigned: number[] = [];
    const toCosigned: number[] = [];
    let notCosigned = 0;
    for (const a of acked) {
      const res = await fetch(`${server.url}/v1/log/proof/inclusion?record_id=${a.id}`);
      if (res.status !== 200) { notCosigned++; continue; }
      const index = ((await res.json()) as { log_index: number }).log_index;
      const s = coveredAt(signed, index);
      const c = coveredAt(cosigned, index);
      if (s !== null) toSigned.push(Math.max(0, s - a.at));
      if (c === null) notCosigned++;
      else toCosigned.push(Math.max(0, c - a.at));
    }
    return {
      kind, writes: acked.length, rate, non201, writeP99: figures(acked.map((a) => a.ms)).p99,
      signed: figures(toSigned), cosigned: figures(toCosigned), notCosigned,
    };
  } finally {
    for (const s of servers.reverse()) await s.stop().catch(() => undefined);
    await db.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function witnessBench(o: WitnessBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  for (const kind of await benchStores(o.postgres, notes)) rows.push(await run(kind, o));
  return [
    `# Witnessed checkpoints (${new Date().toISOString()})`,
    '',
    ...notes.map((n) => `> ${n}`),
    `## From a 201 to a checkpoint covering the record cosigned by two local witnesses (${o.rate} writes/s for ${o.seconds} s)`,
    '',
    markdownTable(['store', 'writes acked', 'writes/s', 'non-201 or no answer', 'write p99 ms', 'signed p50 / p99 ms', 'cosigned p50 / p99 / max ms', 'cosigned p99 / signed p99', 'not cosigned', `cosigned p99 < ${GOAL_P99_MS} ms`],
      rows.map((r) => [storeName(r.kind), String(r.writes), fixed(r.rate, 1), String(r.non201), fixed(r.writeP99, 1),
        `${fixed(r.signed.p50, 0)} / ${fixed(r.signed.p99, 0)}`, `${fixed(r.cosigned.p50, 0)} / ${fixed(r.cosigned.p99, 0)} / ${fixed(r.cosigned.max, 0)}`,
        fixed(r.cosigned.p99 / r.signed.p99, 2), String(r.notCosigned), r.cosigned.p99 < GOAL_P99_MS && r.notCosigned === 0 ? 'yes' : 'NO'])),
    '',
    `Baseline: the same records' time to a signed checkpoint (the log alone), from the same polls (every ${POLL_MS} ms, so both are up to ${POLL_MS} ms late).`,
    'The witnessing job looks at the latest checkpoint every 100 ms and asks each witness on its own; the integrator closes a batch at 256 records or 250 ms.',
  ].join('\n');
}
