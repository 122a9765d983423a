// The broker-import benchmark (issue 13), on SQLite and PostgreSQL: one sync (BrokerSync through
// the service's own BrokerConnections.syncNow, as the sync worker runs it) of an Alpaca
// connection against the simulator's `year` scenario (test/sim/alpaca.ts, ~50,000 fills, served
// by a child process), in fills recorded a second; the time the whole year takes; and this
// process's RSS sampled every 250 ms through the import. The baseline, measured in the same run
// on the same kind of store: the service's own sustained POST /v1/decisions rate (the real service
// in a child process, unsigned, the write suite's load).
//
//   npm run bench -- brokers [--fills 50000] [--duration 10] [--connections 64] [--no-postgres]
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { cpus, loadavg } from 'node:os';
import { buildApp } from '../src/api/app.ts';
import { compose } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/domain/clock.ts';
import { Operators } from '../src/ledger/operators.ts';
import { signatureChecker } from '../src/ledger/signing.ts';
import { openStore } from '../src/store/open.ts';
import { freshPostgres, freshSqlite, benchStores, storeName, type BenchDatabase } from './databases.ts';
import { benchPath, fixed, integerFlag, markdownTable, progress, startChild, suiteFlags, type ChildServer } from './harness.ts';
import { decisionRate } from './service-rate.ts';

export type BrokersBenchOptions = { fills: number; duration: number; connections: number; postgres: boolean };

/** Target from issue 13: the year in under a minute. */
const GOAL = { yearSeconds: 60 };
/** The simulator's fixed paper credentials (test/sim/alpaca.ts dayOfFills). */
const SIM_KEY = { keyId: 'PKSIMULATOR0000000001', secretKey: 'sim-secret-0123456789abcdefghijklmnopqrstu' };

export function brokersOptions(argv: string[]): BrokersBenchOptions {
  const v = suiteFlags(argv, {
    fills: { type: 'string', default: '50000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    fills: integerFlag('fills', v.fills, 1),
    duration: integerFlag('duration', v.duration, 1),
    connections: integerFlag('connections', v.connections, 1),
    postgres: !v['no-postgres'],
  };
}

type Kind = BenchDatabase['kind'];
/** Memory when the sync reported progress: after the orders, then after each chunk of fills. */
type Sample = { recorded: number; phase: string; ms: number; rss: number; heap: number };
type Row = {
  kind: Kind; fills: number; recorded: number; seconds: number; rate: number; writeRate: number;
  ordersSeconds: number; samples: Sample[]; heapBefore: number; heapAfter: number; rssPeak: number; outcome: string;
};

const mb = (bytes: number) => bytes / (1024 * 1024);

/** A full collection, so heap figures before and after the import compare what is retained. */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** One sync of the year, in this process, with RSS sampled throughout. */
async function importYear(kind: Kind, sim: ChildServer, o: BrokersBenchOptions, writeRate: number): Promise<Row> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const store = openStore(db.url);
  try {
    await store.migrate();
    const config = loadConfig({ LEDGER_DATABASE_URL: db.url, LEDGER_MASTER_KEY: randomBytes(32).toString('base64'), LEDGER_SYNC_INTERVAL_S: '0', LEDGER_ALPACA_TRADING_URL: sim.url, LEDGER_LOG_LEVEL: 'warn' });
    const ledger = await buildApp(compose({ store, config, clock: systemClock, checkSignature: signatureChecker(store) }), { logger: { level: 'warn' } });
    try {
      const created = await new Operators(store, systemClock).createAgent({ handle: 'brokerbench' });
      if (!created.ok) throw new Error(created.error.message);
      const res = await ledger.app.inject({
        method: 'POST', url: '/v1/brokers/alpaca',
        headers: { authorization: `Bearer ${created.value.apiKey.secret}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ api_key_id: SIM_KEY.keyId, api_secret: SIM_KEY.secretKey, environment: 'paper' }),
      });
      if (res.statusCode !== 201) throw new Error(`POST /v1/brokers/alpaca answered ${res.statusCode}: ${res.body}`);
      const id = (res.json() as { id: string }).id;
      collect();
      const heapBefore = process.memoryUsage().heapUsed;
      const samples: Sample[] = [];
      let rssPeak = 0;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 250);
      progress(`${storeName(kind)}: importing ${o.fills} fills`);
      const started = performance.now();
      const outcome = await ledger.brokers.syncNow(id, (p) => {
        const m = process.memoryUsage();
        samples.push({ recorded: p.executions_recorded, phase: p.phase, ms: performance.now() - started, rss: m.rss, heap: m.heapUsed });
      });
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      collect();
      const heapAfter = process.memoryUsage().heapUsed;
      const recorded = outcome.kind === 'synced' || outcome.kind === 'failed' ? outcome.summary.counts.executions_recorded : 0;
      const firstFills = samples.find((x) => x.phase === 'fills');
      return {
        kind, fills: o.fills, recorded, seconds, rate: recorded / seconds, writeRate, ordersSeconds: (firstFills?.ms ?? 0) / 1000,
        samples, heapBefore, heapAfter, rssPeak, outcome: outcome.kind,
      };
    } finally {
      await ledger.close();
    }
  } finally {
    await store.close();
    await db.remove();
  }
}

export async function brokersBench(o: BrokersBenchOptions): Promise<string> {
  const notes: string[] = [];
  const kinds = await benchStores(o.postgres, notes);
  const rows: Row[] = [];
  for (const kind of kinds) {
    const writeRate = await decisionRate(kind, o.connections, o.duration);
    // A fresh simulator per store: its request log and rate window start empty.
    const sim = await startChild(benchPath('alpaca-sim-child.ts'), { ...process.env, BENCH_FILLS: String(o.fills) });
    try {
      rows.push(await importYear(kind, sim, o, writeRate));
    } finally {
      await sim.stop();
    }
  }
  return report(o, rows, notes);
}

function report(o: BrokersBenchOptions, rows: Row[], notes: string[]): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    `# brokers benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg().map((l) => fixed(l, 1)).join(' ')}.`,
    '',
    markdownTable(['store', 'fills', 'recorded', 'outcome', 'import s', 'of it orders s', 'fills/s', 'decisions/s (service)', 'ratio', `< ${GOAL.yearSeconds} s`],
      rows.map((r) => [storeName(r.kind), n(r.fills), n(r.recorded), r.outcome, fixed(r.seconds, 1), fixed(r.ordersSeconds, 1), n(r.rate), n(r.writeRate), fixed(r.rate / r.writeRate, 2),
        r.seconds < GOAL.yearSeconds ? 'met' : 'missed'])),
    '',
    'Memory through the import (MB; RSS and V8 heap in use when the sync reported progress, at the first chunk of fills and at each quarter of the fills):',
    '',
    markdownTable(['store', 'heap before (after GC)', 'first chunk RSS / heap', '25%', '50%', '75%', '100%', 'RSS peak', 'heap after (after GC)'],
      rows.map((r) => {
        const at = (share: number) => {
          const x = r.samples.find((s) => s.phase === 'fills' && s.recorded >= share * r.recorded) ?? r.samples[r.samples.length - 1];
          return x ? `${fixed(mb(x.rss), 0)} / ${fixed(mb(x.heap), 0)}` : '?';
        };
        const first = r.samples.find((s) => s.phase === 'fills' && s.recorded > 0);
        return [storeName(r.kind), fixed(mb(r.heapBefore), 0), first ? `${fixed(mb(first.rss), 0)} / ${fixed(mb(first.heap), 0)}` : '?',
          at(0.25), at(0.5), at(0.75), at(1), fixed(mb(r.rssPeak), 0), fixed(mb(r.heapAfter), 0)];
      })),
    '',
    `One sync (BrokerConnections.syncNow, as the sync worker runs it) of the simulator's year scenario (${n(o.fills)} fills, served from a child process); ` +
    'fills are recorded through the append protocol in chunks, each chunk one transaction. decisions/s: the real service, unsigned POST /v1/decisions, ' +
    `${o.connections} connections, ${o.duration} s after 3 s warm-up, on a fresh store of the same kind in the same run. The sync runs in this process; RSS peak sampled every 250 ms.`,
    '',
    ...notes,
  ].join('\n');
}
