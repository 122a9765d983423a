// The decision-write benchmark. Measures, in one run and on this machine: the ceiling (a bare
// fastify endpoint that parses and validates the same body, no storage), then POST /v1/decisions
// unsigned and signed on SQLite and on PostgreSQL. The targets are measured in interleaved
// rounds and every headline figure is a ratio to one measured in the same rounds, so it
// survives a noisy machine. Afterwards every server is killed and its database reopened:
// every record id the benchmark saw acknowledged must be in it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  benchPath, combineRounds, fixed, logCaughtUp, markdownTable, measureInRounds, progress, SETTLE_MS, startChild, warmUp,
  integerFlag, suiteFlags, UsageError, type ChildServer, type Figures, type LoadOptions, type Target,
} from './harness.ts';
import { median, medianInterval } from './stats.ts';
import { freshPostgres, freshSqlite, postgresProblem, serviceEnv, storeName, type BenchDatabase, type DurableCheck } from './databases.ts';
import { createAgents, signBodies, signedWrites, unsignedWrites, type Acknowledged } from './decision-load.ts';

/** Targets from the issue: SQLite at least 0.6 of the ceiling with p99 under 50 ms; signed at least 0.85 of unsigned. */
const GOAL = { sqliteRatio: 0.6, p99Ms: 50, signedRatio: 0.85 };
const LOG_LEVEL = 'warn';
/** The per-key write limit is lifted so it never binds; the limiter still runs on every request. */
const WRITE_LIMIT = 1_000_000_000;

export type WriteOptions = LoadOptions & {
  /** Agents (each with an API key and an Ed25519 key) the writes are spread across. */
  agents: number;
  /** Measure PostgreSQL too (skipped with a note when it cannot be reached). */
  postgres: boolean;
  /** Measure the ladder's rungs (bench/ladder-server.ts) too. */
  ladder: boolean;
  /** Measure SQLite unsigned with Prometheus metrics on (LEDGER_METRICS=true) too, against metrics off. */
  metrics: boolean;
  /** Another checkout of this project (its node_modules installed): its service, unsigned, measured beside this one's. */
  against: string | null;
};

/** The write suite's flags (`npm run bench -- write --help` lists them); a UsageError for anything else. */
export function writeOptions(argv: string[]): WriteOptions {
  const values = suiteFlags(argv, {
    duration: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    agents: { type: 'string', default: '200' },
    'no-postgres': { type: 'boolean', default: false },
    'no-ladder': { type: 'boolean', default: false },
    metrics: { type: 'boolean', default: false },
    against: { type: 'string' },
    profile: { type: 'string' },
  });
  return {
    duration: integerFlag('duration', values.duration, 1),
    rounds: integerFlag('rounds', values.rounds, 1),
    warmup: integerFlag('warmup', values.warmup, 0),
    connections: integerFlag('connections', values.connections, 1),
    agents: integerFlag('agents', values.agents, 1),
    postgres: !values['no-postgres'],
    ladder: !values['no-ladder'],
    metrics: values.metrics,
    against: values.against === undefined ? null : againstCheckout(values.against),
    profileDir: values.profile ?? null,
  };
}

type Kind = BenchDatabase['kind'];
/** `db` is the database whose records are checked afterwards; a rung stores nothing, so has none. */
type WriteTarget = Target & { db: BenchDatabase | null; acked: Acknowledged; rung: boolean };
type Row = { target: WriteTarget; figures: Figures; ratios: number[]; check: DurableCheck | null };


// Write (and, for --against's reads, read) limits lifted so they never bind; the limiters still run on every request.
const serverEnv = (databaseUrl: string, extra: NodeJS.ProcessEnv = {}) =>
  serviceEnv(databaseUrl, { LEDGER_LOG_LEVEL: LOG_LEVEL, LEDGER_WRITE_LIMIT_PER_MIN: String(WRITE_LIMIT), LEDGER_READ_LIMIT_PER_MIN: String(WRITE_LIMIT), ...extra });

/** Everything started so far, so a failure half-way still kills every child and drops every database. */
class Fleet {
  readonly targets: WriteTarget[] = [];
  /** Per store, the unsigned service of this checkout and of --against's, each with one of its agents: what --against's reads compare. */
  readonly readers = new Map<Kind, { own?: Target; against?: Target }>();
  private readonly servers: ChildServer[] = [];
  private readonly dbs: BenchDatabase[] = [];

  constructor(private readonly o: WriteOptions) {}

  async start(label: string, script: string, env: NodeJS.ProcessEnv, db: BenchDatabase | null, requests: Target['requests'], acked: Acknowledged, rung = false): Promise<WriteTarget> {
    const server = await startChild(isAbsolute(script) ? script : benchPath(script), env, this.o.profileDir);
    this.servers.push(server);
    const target = { label, server, requests, db, acked, rung };
    this.targets.push(target);
    return target;
  }

  freshDatabase(kind: Kind): BenchDatabase {
    const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
    this.dbs.push(db);
    return db;
  }

  /** Killed, not stopped: what a database holds afterwards is exactly what was committed. */
  async stopAll(): Promise<void> {
    await Promise.all(this.servers.splice(0).map((s) => (this.o.profileDir ? s.stop() : s.kill())));
  }

  async removeDatabases(): Promise<void> {
    for (const db of this.dbs.splice(0)) await db.remove();
  }
}

async function startCeiling(fleet: Fleet, o: WriteOptions): Promise<WriteTarget> {
  progress('ceiling: bare fastify, same parser, schema and validator, no storage');
  // It reads no API key and answers with no record id: one made-up key, nothing to collect.
  const target = await fleet.start('ceiling: parse + validate, no storage', './ceiling-server.ts',
    { ...process.env, LEDGER_LOG_LEVEL: LOG_LEVEL }, null, unsignedWrites([{ secret: 'dl_live_ceiling' }], null), new Set());
  await warmUp(target, o);
  return target;
}

/** Signed bodies enough for warm-up and every round at twice `rps`: a body sent twice would reuse its nonce. */
const signedBodyCount = (rps: number, o: WriteOptions) => Math.max(20_000, Math.ceil(rps * (o.warmup + o.duration) * 2));

/**
 * The ladder: the SQLite service with layers of the record path taken away (ladder-server.ts),
 * on one fresh database of agents that nothing is ever appended to. Between the ceiling and the
 * full write, each rung shows what one layer costs.
 */
async function startLadder(fleet: Fleet, o: WriteOptions): Promise<void> {
  const db = fleet.freshDatabase('sqlite');
  progress(`ladder: creating ${o.agents} agents on a fresh SQLite database that will stay empty of records`);
  const agents = await createAgents(db.url, o.agents);
  const rung = (name: string) => serverEnv(db.url, { BENCH_RUNG: name });
  const guards = await fleet.start(RUNG_LABELS.guards, './ladder-server.ts', rung('guards'), null, unsignedWrites(agents, null), new Set(), true);
  progress('ladder: warming up the guards-only rung');
  await warmUp(guards, o);
  const unstored = await fleet.start(RUNG_LABELS.unsigned, './ladder-server.ts', rung('unstored'), null, unsignedWrites(agents, null), new Set(), true);
  progress('ladder: warming up the unstored rung, unsigned');
  const warm = await warmUp(unstored, o, Math.max(1, o.warmup));
  const bodies = signBodies(agents, signedBodyCount(warm?.rps ?? 0, o));
  const signed = await fleet.start(RUNG_LABELS.signed, './ladder-server.ts', rung('unstored'), null, signedWrites(bodies, null), new Set(), true);
  progress('ladder: warming up the unstored rung, signed');
  await warmUp(signed, o);
}

const RUNG_LABELS = {
  guards: 'rung: SQLite service, guards only, no record path',
  unsigned: 'rung: record path, append not stored, unsigned',
  signed: 'rung: record path, append not stored, signed',
};

/** Starts the unsigned and the signed target on two fresh databases of one kind, warmed up. */
async function startStore(fleet: Fleet, kind: Kind, o: WriteOptions): Promise<void> {
  const name = storeName(kind);
  const unsignedDb = fleet.freshDatabase(kind);
  const signedDb = fleet.freshDatabase(kind);
  progress(`${name}: creating ${o.agents} agents (API key + Ed25519 key each) on two fresh databases`);
  const unsignedAgents = await createAgents(unsignedDb.url, o.agents);
  const signedAgents = await createAgents(signedDb.url, o.agents);

  const unsignedAcked: Acknowledged = new Set();
  const unsigned = await fleet.start(`${name} POST /v1/decisions, unsigned`, './server-under-test.ts', serverEnv(unsignedDb.url),
    unsignedDb, unsignedWrites(unsignedAgents, unsignedAcked), unsignedAcked);
  fleet.readers.set(kind, { own: readTarget(`${name} public reads`, unsigned.server, unsignedAgents[0]!.handle) });
  progress(`${name}: warming up the unsigned target`);
  const warm = await warmUp(unsigned, o, Math.max(1, o.warmup));

  // A body sent twice would reuse its nonce and be refused, which the report would show as non-2xx.
  const count = signedBodyCount(warm?.rps ?? 0, o);
  progress(`${name}: signing ${count} bodies before the clock starts`);
  const bodies = signBodies(signedAgents, count);
  const signedAcked: Acknowledged = new Set();
  const signed = await fleet.start(`${name} POST /v1/decisions, signed`, './server-under-test.ts', serverEnv(signedDb.url),
    signedDb, signedWrites(bodies, signedAcked), signedAcked);
  progress(`${name}: warming up the signed target`);
  await warmUp(signed, o);
  if (o.metrics && kind === 'sqlite') await startMetricsOn(fleet, o);
  if (o.against) await startAgainst(fleet, kind, o.against, o);
}

/** `--against`: a directory that holds this project's service (bench/server-under-test.ts), or a UsageError. */
function againstCheckout(dir: string): string {
  const root = resolve(dir);
  if (!existsSync(join(root, 'bench', 'server-under-test.ts')) || !existsSync(join(root, 'node_modules'))) {
    throw new UsageError(`--against ${dir}: not a checkout of this project with its node_modules installed`);
  }
  return root;
}

const againstLabel = (kind: Kind) => `${storeName(kind)} POST /v1/decisions, unsigned, --against`;

/**
 * The other checkout's service, unsigned, on a fresh database whose agents that checkout's own
 * code creates (its schema may be older than this one's).
 */
async function startAgainst(fleet: Fleet, kind: Kind, root: string, o: WriteOptions): Promise<void> {
  const db = fleet.freshDatabase(kind);
  progress(`${storeName(kind)}: creating ${o.agents} agents with ${root}'s code`);
  const module = pathToFileURL(join(root, 'bench', 'decision-load.ts')).href;
  const script = `const { createAgents } = await import(${JSON.stringify(module)});
    const agents = await createAgents(process.env.BENCH_DATABASE_URL, Number(process.env.BENCH_AGENTS));
    process.stdout.write(JSON.stringify(agents.map((a) => ({ handle: a.handle, secret: a.secret }))));`;
  const created = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root, env: { ...process.env, BENCH_DATABASE_URL: db.url, BENCH_AGENTS: String(o.agents) }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  if (created.status !== 0) throw new Error(`${root} could not create agents: ${created.stderr}`);
  const agents = JSON.parse(created.stdout) as { handle: string; secret: string }[];
  const acked: Acknowledged = new Set();
  const target = await fleet.start(againstLabel(kind), join(root, 'bench', 'server-under-test.ts'), serverEnv(db.url), db, unsignedWrites(agents, acked), acked);
  const readers = fleet.readers.get(kind) ?? {};
  fleet.readers.set(kind, { ...readers, against: readTarget(`${storeName(kind)} public reads, --against`, target.server, agents[0]!.handle) });
  progress(`${storeName(kind)}: warming up the --against target`);
  await warmUp(target, o);
}

/** The public reads of one agent and of everyone, as a reader cycles over them: its profile, a chain page, a ledger page, the transparency document. */
function readTarget(label: string, server: ChildServer, handle: string): Target {
  const paths = [`/v1/agents/${handle}`, `/v1/agents/${handle}/chain?limit=100`, '/v1/ledger?limit=50', '/v1/transparency'];
  return { label, server, requests: () => paths.map((path) => ({ method: 'GET', path })) };
}

/**
 * --against, reads: after the writes, on the records they left, this checkout's public reads and
 * the other's in interleaved rounds (4 connections, as the read suite), once both logs hold every
 * record (their integrators idle, as in the read suite): req/s and p99, this / against.
 */
async function compareReads(fleet: Fleet, o: WriteOptions): Promise<string[]> {
  if (!o.against) return [];
  const lines = [`- public reads against ${o.against} (profile, chain page of 100, ledger page of 50, transparency; 4 connections; the records the writes left; rounds interleaved):`];
  for (const [kind, { own, against }] of fleet.readers) {
    if (!own || !against) continue;
    progress(`${storeName(kind)}: waiting for both logs to hold every record written, then public reads, this checkout and --against in turns`);
    await Promise.all([logCaughtUp(own.server), logCaughtUp(against.server)]);
    const rounds = await measureInRounds([own, against], { ...o, connections: 4 });
    const paired = ratiosByRound(rounds[0]!, rounds[1]!);
    const p99 = rounds[0]!.flatMap((f, i) => (rounds[1]![i]!.p99 > 0 ? [f.p99 / rounds[1]![i]!.p99] : []));
    lines.push(`  - ${storeName(kind)}, this / against: req/s ${overRounds(paired.ratios)}; p99 ${overRounds(p99)}`);
  }
  return lines;
}

/** This checkout's unsigned target over the --against one's, round by round: req/s and server CPU per write. */
function againstLines(rows: Row[], rounds: Figures[][], o: WriteOptions): string[] {
  if (!o.against) return [];
  const lines = [`- against ${o.against} (the same load, rounds interleaved):`];
  for (const kind of ['sqlite', 'postgres'] as const) {
    const other = rows.findIndex((r) => r.target.label === againstLabel(kind));
    const own = rows.findIndex((r) => r.target.db?.kind === kind && r.target.label.endsWith('unsigned'));
    if (other < 0 || own < 0) continue;
    const paired = ratiosByRound(rounds[own]!, rounds[other]!);
    const cpu = rounds[own]!.flatMap((f, i) => {
      const [a, b] = [f.serverCpuMs, rounds[other]![i]!.serverCpuMs];
      return a !== null && b !== null && b > 0 ? [a / b] : [];
    });
    lines.push(`  - ${storeName(kind)} unsigned, this / against: req/s ${overRounds(paired.ratios)}; server CPU per write ${overRounds(cpu)}`, ...stallNote(paired));
  }
  return lines;
}

const METRICS_ON_LABEL = 'SQLite POST /v1/decisions, unsigned, metrics on';

/** SQLite unsigned as above, with LEDGER_METRICS=true: what the metrics cost a write. */
async function startMetricsOn(fleet: Fleet, o: WriteOptions): Promise<void> {
  const db = fleet.freshDatabase('sqlite');
  const agents = await createAgents(db.url, o.agents);
  const acked: Acknowledged = new Set();
  const target = await fleet.start(METRICS_ON_LABEL, './server-under-test.ts', serverEnv(db.url, { LEDGER_METRICS: 'true' }), db, unsignedWrites(agents, acked), acked);
  progress('SQLite: warming up the unsigned target with metrics on');
  await warmUp(target, o);
}

/** Metrics on over metrics off, round by round (--metrics). */
function metricsLines(rows: Row[], rounds: Figures[][]): string[] {
  const on = rows.findIndex((r) => r.target.label === METRICS_ON_LABEL);
  const off = rows.findIndex((r) => r.target.db?.kind === 'sqlite' && r.target.label.endsWith('unsigned'));
  if (on < 0 || off < 0) return [];
  const paired = ratiosByRound(rounds[on]!, rounds[off]!);
  return [`- SQLite unsigned, metrics on / off: ${overRounds(paired.ratios)}`, ...stallNote(paired)];
}

function durableCell(row: Row): string {
  if (row.target.rung) return 'n/a: stores nothing';
  const check = row.check;
  if (!check) return 'n/a';
  const lost = check.acked - check.found;
  const unanswered = check.records - check.found;
  return `${lost === 0 ? 'ok' : `LOST ${lost}`}: ${check.found}/${check.acked} acked on disk${unanswered > 0 ? ` (+${unanswered} unanswered)` : ''}`;
}

function statusNote(row: Row): string | null {
  const other = Object.entries(row.figures.statusCodes).filter(([code]) => !code.startsWith('2'));
  if (other.length === 0 && row.figures.errors === 0) return null;
  const parts = other.map(([code, n]) => `${n}× ${code}`);
  if (row.figures.errors > 0) parts.push(`${row.figures.errors} connection errors/timeouts`);
  return `- ${row.target.label}: ${parts.join(', ')}`;
}

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

function cpuMultiple(row: Row, ceiling: Row): string {
  const [a, b] = [row.figures.serverCpuMs, ceiling.figures.serverCpuMs];
  return a === null || b === null ? 'n/a' : `${fixed(a / b, 1)}×`;
}

/** The ladder read top to bottom: what each layer of an unsigned SQLite write adds, in ratio and in CPU. */
function ladderLines(rows: Row[], rounds: Figures[][]): string[] {
  const at = (pick: (r: Row) => boolean) => rows.findIndex(pick);
  const steps = [
    { name: 'ceiling', i: 0 },
    { name: 'guards only', i: at((r) => r.target.label === RUNG_LABELS.guards) },
    { name: 'record path without storage', i: at((r) => r.target.label === RUNG_LABELS.unsigned) },
    { name: 'with the SQLite append', i: at((r) => r.target.db?.kind === 'sqlite' && r.target.label.endsWith('unsigned')) },
  ];
  if (steps.some((s) => s.i < 0)) return [];
  const cpu = (i: number) => rows[i]!.figures.serverCpuMs;
  const walk = steps.map(({ name, i }, k) => {
    const before = k > 0 ? cpu(steps[k - 1]!.i) : null;
    const now = cpu(i);
    const added = before !== null && now !== null ? `, +${fixed(now - before, 3)} ms` : '';
    return `${name} ${fixed(median(rows[i]!.ratios))} (${now === null ? 'n/a' : fixed(now, 3)} ms CPU${added})`;
  });
  const signed = at((r) => r.target.label === RUNG_LABELS.signed);
  const unsigned = steps[2]!.i;
  const paired = ratiosByRound(rounds[signed]!, rounds[unsigned]!);
  return [
    `- where an unsigned SQLite write's time goes (ratio to the ceiling, server CPU per request, what the layer added): ${walk.join(' → ')}`,
    `- signed / unsigned on the record path without storage: ${overRounds(paired.ratios)} (what the signature costs before any storage)`,
    ...stallNote(paired),
  ];
}

type RoundRatios = { ratios: number[]; stalled: number[] };

/**
 * One target's req/s over another's, round by round, leaving out the rounds in which either
 * answered nothing in its steady part: a stall of the server or of the machine, where a ratio
 * means nothing (and one over zero would read Infinity).
 */
function ratiosByRound(numerator: Figures[], denominator: Figures[]): RoundRatios {
  const paired: RoundRatios = { ratios: [], stalled: [] };
  numerator.forEach((n, i) => {
    const d = denominator[i]!;
    if (n.rps > 0 && d.rps > 0) paired.ratios.push(n.rps / d.rps);
    else paired.stalled.push(i + 1);
  });
  return paired;
}

const stallNote = ({ stalled }: RoundRatios): string[] => stalled.length === 0 ? [] : [
  `  - left out: round${stalled.length > 1 ? 's' : ''} ${stalled.join(', ')}, where the signed or the unsigned target answered nothing ` +
    'in its steady part (a stall of the server or of the machine; its length shows in p99 only if the answers came before the round ended)',
];

/** Event-loop time per answered write in one round (µs): the loop's busy share over the writes it answered. */
const loopMicrosPerWrite = (f: Figures): number | null => (f.eventLoopBusy === null || f.rps === 0 ? null : (f.eventLoopBusy / f.rps) * 1e6);

/**
 * What a signature adds to one write, in server CPU (every thread, the verifier's included) and in
 * event-loop time, beside the event-loop time the signed goal leaves it: the loop is the
 * bottleneck of an unsigned write, so that is the budget a signature has to fit in.
 */
function signatureCost(unsigned: Row, signed: Row, unsignedRounds: Figures[], signedRounds: Figures[]): string {
  const [u, s] = [unsigned.figures.serverCpuMs, signed.figures.serverCpuMs];
  const change = (x: number, digits: number) => `${x < 0 ? '−' : '+'}${fixed(Math.abs(x), digits)}`;
  const cpu = u === null || s === null ? 'n/a' : `${change(s - u, 3)} ms`;
  const loop = (rounds: Figures[]) => {
    const perRound = rounds.map(loopMicrosPerWrite).filter((x) => x !== null);
    return perRound.length > 0 ? median(perRound) : null;
  };
  const [lu, ls] = [loop(unsignedRounds), loop(signedRounds)];
  const loopPart = lu === null || ls === null
    ? 'event loop per write n/a'
    : `event loop per write ${fixed(lu, 0)} → ${fixed(ls, 0)} µs (${change(ls - lu, 0)} µs; ${GOAL.signedRatio} of unsigned leaves it +${fixed(lu / GOAL.signedRatio - lu, 0)} µs)`;
  return `what a signature adds to a write (medians over rounds): server CPU, every thread, ${cpu}; ${loopPart}`;
}

/** A per-round ratio as its median, with the interval and spread that tell a real difference from this machine's noise. */
function overRounds(perRound: number[]): string {
  if (perRound.length === 0) return 'n/a (no round where both answered)';
  const interval = medianInterval(perRound);
  const said = interval
    ? `${fixed(interval.coverage * 100, 0)}% interval for the median ${fixed(interval.low)} to ${fixed(interval.high)}`
    : 'too few rounds for a 95% interval of the median (6 or more)';
  return `${fixed(median(perRound))} (median over ${perRound.length} rounds; ${said}; rounds ranged ${fixed(Math.min(...perRound))} to ${fixed(Math.max(...perRound))})`;
}

/** Whether a per-round ratio's median meets a goal, and whether the rounds' noise could turn that verdict. */
function againstGoal(perRound: number[], goal: number): string {
  if (perRound.length === 0) return 'n/a';
  const interval = medianInterval(perRound);
  const where = !interval
    ? 'too few rounds to tell from noise'
    : interval.high < goal ? 'its interval lies below the goal'
    : interval.low >= goal ? 'its interval lies above the goal'
    : 'its interval straddles the goal: more rounds would tell';
  return `${fixed(median(perRound))}, ${where}`;
}

function report(o: WriteOptions, rows: Row[], rounds: Figures[][], durability: Map<Kind, string>, skipped: string | null, load: string): string {
  const ceilingRounds = rounds[0]!.map((f) => fixed(f.rps, 0));
  const table = rows.map((r) => [
    r.target.label,
    fixed(r.figures.rps, 0),
    fixed(r.figures.p50, 1),
    fixed(r.figures.p99, 1),
    fixed(median(r.ratios)),
    r.figures.serverCpuMs === null ? 'n/a' : fixed(r.figures.serverCpuMs, 3),
    r.figures.eventLoopBusy === null ? 'n/a' : `${fixed(r.figures.eventLoopBusy * 100, 0)}%`,
    String(r.figures.non2xx),
    durableCell(r),
  ]);
  const lines = [
    '## Decision writes',
    '',
    `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, load average ${load} at start. ` +
      `${o.connections} connections, ${o.warmup} s warm-up, then ${o.duration} s per target measured in ${o.rounds} interleaved rounds; ` +
      `${o.agents} agents; log level ${LOG_LEVEL}; per-key write limit lifted to ${WRITE_LIMIT} (the limiter still runs). ` +
      `req/s and ratios are medians over the rounds (a ratio compares a target with the ceiling of the same round); p50 and p99 pool every round's samples. ` +
      `Requests sent in each run's first ${SETTLE_MS} ms, while autocannon opens its connections, are load but not samples.`,
    '',
    markdownTable(['target', 'req/s', 'p50 ms', 'p99 ms', 'ratio to ceiling', 'server CPU ms/req', 'event loop busy', 'non-2xx', 'durable check'], table),
    '',
    `- ceiling per round (req/s): ${ceilingRounds.join(', ')}; the load generator used ${fixed(rows[0]!.figures.clientCpuShare * 100, 0)}% of a core meanwhile (near 100%, the ceiling is the generator's, not the server's)`,
    `- server CPU per request relative to the ceiling (a figure the neighbours' load moves less): ${rows.slice(1).map((r) => `${r.target.label.replace(' POST /v1/decisions', '')} ${cpuMultiple(r, rows[0]!)}`).join('; ')}`,
    '- server CPU counts every thread of the server process; event loop busy is the share of the run its JavaScript thread was working (near 100%, that thread is the bottleneck)',
  ];
  const signedRatios = new Map<Kind, number[]>();
  for (const kind of ['sqlite', 'postgres'] as const) {
    const unsigned = rows.findIndex((r) => r.target.db?.kind === kind && r.target.label.endsWith('unsigned'));
    const signed = rows.findIndex((r) => r.target.db?.kind === kind && r.target.label.endsWith(', signed'));
    if (unsigned < 0 || signed < 0) continue;
    const paired = ratiosByRound(rounds[signed]!, rounds[unsigned]!);
    signedRatios.set(kind, paired.ratios);
    lines.push(`- ${storeName(kind)}: signed / unsigned = ${overRounds(paired.ratios)}; durability: ${durability.get(kind)}`);
    lines.push(...stallNote(paired));
    lines.push(`  - ${signatureCost(rows[unsigned]!, rows[signed]!, rounds[unsigned]!, rounds[signed]!)}`);
  }
  lines.push(...ladderLines(rows, rounds));
  lines.push(...metricsLines(rows, rounds));
  lines.push(...againstLines(rows, rounds, o));
  if (skipped) lines.push(`- PostgreSQL skipped: ${skipped}`);
  const notes = rows.map(statusNote).filter((n) => n !== null);
  if (notes.length > 0) lines.push('', 'Answers other than 2xx:', ...notes);

  const sqlite = rows.find((r) => r.target.db?.kind === 'sqlite');
  if (sqlite) {
    const ratio = median(sqlite.ratios);
    const durable = rows.every((r) => r.check === null || r.check.found === r.check.acked);
    lines.push(
      '',
      'Goals:',
      `- SQLite unsigned at least ${GOAL.sqliteRatio} of the ceiling: ${verdict(ratio >= GOAL.sqliteRatio)} (${fixed(ratio)})`,
      `- SQLite p99 under ${GOAL.p99Ms} ms: ${verdict(sqlite.figures.p99 < GOAL.p99Ms)} (${fixed(sqlite.figures.p99, 1)} ms)`,
      `- every acknowledged write on disk: ${verdict(durable)}`,
      `- signed at least ${GOAL.signedRatio} of unsigned: ${verdict([...signedRatios.values()].every((r) => r.length > 0 && median(r) >= GOAL.signedRatio))} ` +
        `(${[...signedRatios].map(([k, r]) => `${storeName(k)} ${againstGoal(r, GOAL.signedRatio)}`).join('; ')})`,
    );
  }
  return lines.join('\n') + '\n';
}

export async function writeBench(o: WriteOptions): Promise<string> {
  const load = loadavg().map((x) => fixed(x)).join(' ');
  const skipped = o.postgres ? await postgresProblem() : 'not requested (--no-postgres)';
  if (skipped !== null) progress(`PostgreSQL skipped: ${skipped}`);
  const fleet = new Fleet(o);
  try {
    await startCeiling(fleet, o);
    if (o.ladder) await startLadder(fleet, o);
    await startStore(fleet, 'sqlite', o);
    if (skipped === null) await startStore(fleet, 'postgres', o);
    const rounds = await measureInRounds(fleet.targets, o);
    const readLines = await compareReads(fleet, o);
    await fleet.stopAll();

    progress('checking every acknowledged record id against the databases');
    const durability = new Map<Kind, string>();
    const rows: Row[] = [];
    for (const [i, target] of fleet.targets.entries()) {
      const { ratios } = ratiosByRound(rounds[i]!, rounds[0]!);
      const check = target.db ? await target.db.check(target.acked) : null;
      if (target.db && !durability.has(target.db.kind)) durability.set(target.db.kind, await target.db.durability());
      rows.push({ target, figures: combineRounds(rounds[i]!), ratios, check });
    }
    return report(o, rows, rounds, durability, skipped, load) + (readLines.length > 0 ? `\n${readLines.join('\n')}\n` : '');
  } finally {
    await fleet.stopAll();
    await fleet.removeDatabases();
  }
}
