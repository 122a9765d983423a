// The decision-write benchmark. Measures, in one run and on this machine: the ceiling (a bare
// fastify endpoint that parses and validates the same body, no storage), then POST /v1/decisions
// unsigned and signed on SQLite and on PostgreSQL. Every figure that matters is a ratio to
// something measured in the same run, so it survives a noisy machine. After each target the
// server is killed and the database reopened: every acknowledged record id must be in it.
import { cpus, loadavg } from 'node:os';
import {
  benchPath, fixed, markdownTable, progress, startChild, warmThenMeasure, type BenchOptions, type Figures,
} from './harness.ts';
import { freshPostgres, freshSqlite, postgresProblem, type BenchDatabase, type DurableCheck } from './databases.ts';
import { createAgents, signBodies, signedWrites, unsignedWrites, type Acknowledged } from './decision-load.ts';

/** Targets from the issue: SQLite at least 0.6 of the ceiling with p99 under 50 ms; signed at least 0.85 of unsigned. */
const TARGET = { sqliteRatio: 0.6, p99Ms: 50, signedRatio: 0.85 };
const LOG_LEVEL = 'warn';
/** The per-key write limit is lifted so it never binds; the limiter still runs on every request. */
const WRITE_LIMIT = 1_000_000_000;

type Variant = 'unsigned' | 'signed';
type Measured = { label: string; figures: Figures; check: DurableCheck | null };
type StoreResult = { kind: BenchDatabase['kind']; durability: string; unsigned: Measured; signed: Measured };

function serverEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LEDGER_DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LEDGER_LOG_LEVEL: LOG_LEVEL,
    LEDGER_WRITE_LIMIT_PER_MIN: String(WRITE_LIMIT),
    LEDGER_BASE_URL: 'http://127.0.0.1/v1',
    LEDGER_SITE_URL: 'http://127.0.0.1',
    LEDGER_REDIS_URL: '',
    LEDGER_ADMIN_TOKEN: '',
  };
}

async function measureCeiling(o: BenchOptions): Promise<Measured> {
  progress('ceiling: bare fastify, same parser, schema and validator, no storage');
  const server = await startChild(benchPath('./ceiling-server.ts'), { ...process.env, LEDGER_LOG_LEVEL: LOG_LEVEL }, o.profileDir);
  try {
    // The ceiling reads no API key and answers with no record id: one made-up key, nothing to collect.
    const figures = await warmThenMeasure(server, o, unsignedWrites([{ secret: 'dl_live_ceiling' }], null));
    return { label: 'ceiling: parse + validate, no storage', figures, check: null };
  } finally {
    await server.stop();
  }
}

/** How many signed bodies to prepare: enough for warm-up and measurement at 1.5 times the unsigned rate. */
function signedBodyCount(o: BenchOptions, unsignedRps: number): number {
  return Math.max(30_000, Math.ceil(unsignedRps * (o.warmup + o.duration) * 1.5) + 1000);
}

async function measureWrites(kind: BenchDatabase['kind'], variant: Variant, o: BenchOptions, unsignedRps: number): Promise<Measured & { durability: string }> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const label = `${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} POST /v1/decisions, ${variant}`;
  try {
    progress(`${label}: creating ${o.agents} agents with API and signing keys`);
    const agents = await createAgents(db.url, o.agents);
    const acked: Acknowledged = new Set();
    let requests = unsignedWrites(agents, acked);
    if (variant === 'signed') {
      const count = signedBodyCount(o, unsignedRps);
      progress(`${label}: signing ${count} bodies before the clock starts`);
      requests = signedWrites(signBodies(agents, count), acked);
    }
    progress(`${label}: ${o.warmup} s warm-up, ${o.duration} s measured`);
    const server = await startChild(benchPath('./server-under-test.ts'), serverEnv(db.url), o.profileDir);
    let figures: Figures;
    try {
      figures = await warmThenMeasure(server, o, requests);
    } finally {
      // Killed, not stopped: what the database holds afterwards is exactly what was committed.
      await (o.profileDir ? server.stop() : server.kill());
    }
    return { label, figures, check: await db.check(acked), durability: await db.durability() };
  } finally {
    await db.remove();
  }
}

async function measureStore(kind: BenchDatabase['kind'], o: BenchOptions): Promise<StoreResult> {
  const unsigned = await measureWrites(kind, 'unsigned', o, 0);
  const signed = await measureWrites(kind, 'signed', o, unsigned.figures.rps);
  return { kind, durability: unsigned.durability, unsigned, signed };
}

function durableCell(check: DurableCheck | null): string {
  if (!check) return 'n/a';
  const lost = check.acked - check.found;
  const unanswered = check.records - check.found;
  const verdict = lost === 0 ? 'ok' : `LOST ${lost}`;
  return `${verdict}: ${check.found}/${check.acked} acked on disk${unanswered > 0 ? ` (+${unanswered} unanswered)` : ''}`;
}

function statusNote(m: Measured): string | null {
  const other = Object.entries(m.figures.statusCodes).filter(([code]) => !code.startsWith('2'));
  if (other.length === 0 && m.figures.errors === 0) return null;
  const codes = other.map(([code, n]) => `${n}× ${code}`);
  if (m.figures.errors > 0) codes.push(`${m.figures.errors} connection errors/timeouts`);
  return `- ${m.label}: ${codes.join(', ')}`;
}

const yes = (ok: boolean) => (ok ? 'met' : 'MISSED');

function report(o: BenchOptions, ceiling: Measured, stores: StoreResult[], skipped: string | null, load: string): string {
  const rows = [ceiling, ...stores.flatMap((s) => [s.unsigned, s.signed])].map((m) => [
    m.label,
    fixed(m.figures.rps, 0),
    fixed(m.figures.p50, 1),
    fixed(m.figures.p99, 1),
    fixed(m.figures.rps / ceiling.figures.rps),
    m.figures.serverCpuMs === null ? 'n/a' : fixed(m.figures.serverCpuMs, 3),
    String(m.figures.non2xx),
    durableCell(m.check),
  ]);
  const lines = [
    '## Decision writes',
    '',
    `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, load average ${load} at start. ` +
      `${o.connections} connections, ${o.warmup} s warm-up + ${o.duration} s measured per target, ${o.agents} agents, ` +
      `log level ${LOG_LEVEL}, per-key write limit lifted to ${WRITE_LIMIT} (the limiter still runs).`,
    '',
    markdownTable(['target', 'req/s', 'p50 ms', 'p99 ms', 'ratio to ceiling', 'server CPU ms/req', 'non-2xx', 'durable check'], rows),
    '',
  ];
  for (const s of stores) {
    const name = s.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    lines.push(`- ${name}: signed / unsigned = ${fixed(s.signed.figures.rps / s.unsigned.figures.rps)}; durability: ${s.durability}`);
  }
  if (skipped) lines.push(`- PostgreSQL skipped: ${skipped}`);
  const notes = [ceiling, ...stores.flatMap((s) => [s.unsigned, s.signed])].map(statusNote).filter((n) => n !== null);
  if (notes.length > 0) lines.push('', 'Answers other than 2xx:', ...notes);

  const sqlite = stores.find((s) => s.kind === 'sqlite');
  if (sqlite) {
    const ratio = sqlite.unsigned.figures.rps / ceiling.figures.rps;
    const durable = stores.every((s) => [s.unsigned, s.signed].every((m) => m.check && m.check.found === m.check.acked));
    const signedRatios = stores.map((s) => s.signed.figures.rps / s.unsigned.figures.rps);
    lines.push(
      '',
      'Targets:',
      `- SQLite unsigned at least ${TARGET.sqliteRatio} of the ceiling: ${yes(ratio >= TARGET.sqliteRatio)} (${fixed(ratio)})`,
      `- SQLite p99 under ${TARGET.p99Ms} ms: ${yes(sqlite.unsigned.figures.p99 < TARGET.p99Ms)} (unsigned ${fixed(sqlite.unsigned.figures.p99, 1)} ms, signed ${fixed(sqlite.signed.figures.p99, 1)} ms)`,
      `- every acknowledged write on disk: ${yes(durable)}`,
      `- signed at least ${TARGET.signedRatio} of unsigned: ${yes(signedRatios.every((r) => r >= TARGET.signedRatio))} (${signedRatios.map((r) => fixed(r)).join(', ')})`,
    );
  }
  return lines.join('\n') + '\n';
}

export async function writeBench(o: BenchOptions): Promise<string> {
  const load = loadavg().map((x) => fixed(x)).join(' ');
  const ceiling = await measureCeiling(o);
  const stores: StoreResult[] = [await measureStore('sqlite', o)];
  const skipped: string | null = o.postgres ? await postgresProblem() : 'not requested (--no-postgres)';
  if (skipped === null) stores.push(await measureStore('postgres', o));
  if (skipped !== null) progress(`PostgreSQL skipped: ${skipped}`);
  return report(o, ceiling, stores, skipped, load);
}
