// The benchmark harness: servers under test run in child processes (so the load generator in
// this process never shares their event loop), autocannon drives them, and the figures come
// back as one small record per measured target. Shared by every suite run from bench/run.ts.
import autocannon, { type Request } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ChildQuestion, EventLoopTimes } from './child.ts';
import { median } from './stats.ts';

/** How load is applied; every suite that uses this harness has these settings. */
export type LoadOptions = {
  /** Seconds measured per target. */
  duration: number;
  /** The measured seconds are split into this many rounds, interleaved across targets. */
  rounds: number;
  /** Seconds of load before measuring, not counted. */
  warmup: number;
  /** Concurrent HTTP/1.1 keep-alive connections (no pipelining). */
  connections: number;
  /** Write a V8 CPU profile of each server under test into this directory. */
  profileDir: string | null;
};

export type Figures = {
  /** 2xx answers per second, over the steady part of the run (see SETTLE_MS). */
  rps: number;
  /** Latency percentiles in ms, request written to response read, steady part of the run. */
  p50: number;
  p99: number;
  /** Every steady-part latency sample, ascending (ms). */
  latencies: number[];
  ok: number;
  non2xx: number;
  /** Connection errors and timeouts (no HTTP status at all). */
  errors: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /** CPU time the server process used per 2xx answer (null where /proc is not available). */
  serverCpuMs: number | null;
  /** CPU the load generator (this process) used, as a share of one core: near 1, it is the bottleneck. */
  clientCpuShare: number;
  /** Share of the run the server's event loop was busy (null if it did not say): near 1, the loop is the bottleneck. */
  eventLoopBusy: number | null;
};

/** A bad command-line flag: bench/run.ts prints it with the suite's usage, without a stack trace. */
export class UsageError extends Error {}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** A suite's flags parsed strictly (an unknown or malformed flag is a UsageError). */
export function suiteFlags<T extends FlagOptions>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A flag's whole-number value of at least `min`, or a UsageError naming the flag. */
export function integerFlag(name: string, raw: string, min: number): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) throw new UsageError(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export type ChildServer = {
  url: string;
  /** The server's process id (its memory: /proc/<pid>/status). */
  pid: number;
  /** CPU seconds (user + system) the server process has used so far, or null without /proc. */
  cpuSeconds: () => number | null;
  /** The server's event-loop idle and active time so far (null if it does not answer within a second). */
  eventLoop: () => Promise<EventLoopTimes | null>;
  /** SIGKILL: nothing is flushed on the way out, so what is on disk is what was committed. */
  kill: () => Promise<void>;
  /** SIGTERM: the graceful stop (in-flight writes finish; a CPU profile gets written). */
  stop: () => Promise<void>;
};

export const benchPath = (name: string) => fileURLToPath(new URL(name, import.meta.url));

/**
 * Starts `node --import tsx <script>` with `env`; the script answers `{ ready: url }` over IPC
 * once it listens. A child that exits first fails the start with its exit status.
 */
export function startChild(script: string, env: NodeJS.ProcessEnv, profileDir: string | null = null): Promise<ChildServer> {
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    // A bench talks to loopback only: the anchoring job's calendars point at a closed local port
    // unless the bench names its own.
    env: { LEDGER_OTS_CALENDARS: 'http://127.0.0.1:9', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start within 60 s`));
    }, 60_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before listening (${signal ?? `status ${code}`})`));
    });
    child.once('message', (message: { ready?: string }) => {
      clearTimeout(timer);
      if (!message.ready) return reject(new Error(`${script} sent an unexpected message`));
      resolve({
        url: message.ready,
        pid: child.pid!,
        cpuSeconds: () => processCpuSeconds(child.pid!),
        eventLoop: () => askEventLoop(child),
        kill: () => signalAndWait(child, 'SIGKILL', exited),
        stop: () => signalAndWait(child, 'SIGTERM', exited),
      });
    });
  });
}

/** utime + stime of a Linux process, from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s). */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function askEventLoop(child: ChildProcess): Promise<EventLoopTimes | null> {
  return new Promise((resolve) => {
    const answer = (message: { eventLoop?: EventLoopTimes }) => {
      if (!message.eventLoop) return;
      settle(message.eventLoop);
    };
    const settle = (times: EventLoopTimes | null) => {
      clearTimeout(timer);
      child.off('message', answer);
      resolve(times);
    };
    const timer = setTimeout(() => settle(null), 1000);
    child.on('message', answer);
    child.send('event-loop' satisfies ChildQuestion);
  });
}

async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  await exited;
}

/**
 * Requests sent in a run's first SETTLE_MS are load but not samples: every autocannon run opens
 * its connections afresh, and the first answers on new connections wait behind connection
 * set-up (history/tooling.md: seen in the first requests of each run). Counting
 * them would measure connecting, not writing, and would dominate p99 in short rounds.
 */
export const SETTLE_MS = 250;

type Timed = { sentAt?: number };

/** Wraps requests so each response's latency (request written to response read) is recorded. */
function timed(requests: Request[], record: (sentAt: number, status: number) => void): Request[] {
  return requests.map((r) => ({
    ...r,
    setupRequest: (request, context) => {
      const built = r.setupRequest ? r.setupRequest(request, context) : request;
      (context as Timed).sentAt = performance.now();
      return built;
    },
    onResponse: (status, body, context, headers) => {
      const { sentAt } = context as Timed;
      if (sentAt !== undefined) record(sentAt, status);
      r.onResponse?.(status, body, context, headers);
    },
  }));
}

/** The q-quantile of ascending `sorted` (nearest rank), 0 when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Runs `requests` against the server for `seconds`. Rate and latencies cover the steady part
 * of the run (requests sent after SETTLE_MS); counts and status codes cover the whole run.
 */
export async function load(server: ChildServer, connections: number, seconds: number, requests: Request[]): Promise<Figures> {
  const latencies: number[] = [];
  let steadyOk = 0;
  const settleMs = Math.min(SETTLE_MS, (seconds * 1000) / 4);
  const settled = performance.now() + settleMs;
  const record = (sentAt: number, status: number) => {
    if (sentAt < settled) return;
    latencies.push(performance.now() - sentAt);
    if (status >= 200 && status < 300) steadyOk++;
  };
  const loopBefore = await server.eventLoop();
  const cpuBefore = server.cpuSeconds();
  const clientBefore = process.cpuUsage();
  const result = await autocannon({ url: server.url, connections, duration: seconds, pipelining: 1, timeout: 10, requests: timed(requests, record) });
  const cpuAfter = server.cpuSeconds();
  const client = process.cpuUsage(clientBefore);
  const loopAfter = await server.eventLoop();
  const steadySeconds = result.duration - settleMs / 1000;
  latencies.sort((a, b) => a - b);
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    rps: steadyOk / steadySeconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    latencies,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
    seconds: result.duration,
    serverCpuMs: cpuBefore !== null && cpuAfter !== null && result['2xx'] > 0 ? ((cpuAfter - cpuBefore) * 1000) / result['2xx'] : null,
    clientCpuShare: (client.user + client.system) / 1e6 / result.duration,
    eventLoopBusy: loopBefore && loopAfter ? busyShare(loopBefore, loopAfter) : null,
  };
}

function busyShare(before: EventLoopTimes, after: EventLoopTimes): number {
  const active = after.active - before.active;
  const idle = after.idle - before.idle;
  return active + idle > 0 ? active / (active + idle) : 0;
}

/** A server under test and the requests it receives; `requests` is called once per autocannon run. */
export type Target = { label: string; server: ChildServer; requests: () => Request[] };

/** Load for `seconds`, figures discarded: JIT, caches and connection pools settle first. */
export async function warmUp(target: Target, o: LoadOptions, seconds = o.warmup): Promise<Figures | null> {
  return seconds > 0 ? load(target.server, o.connections, seconds, target.requests()) : null;
}

/**
 * Measures every target for `o.duration` seconds in total, in `o.rounds` interleaved rounds
 * (ceiling, A, B, ..., ceiling, A, B, ...), so a slow drift in the machine's background load
 * hits every target alike. Returns each target's figures per round.
 */
export async function measureInRounds(targets: Target[], o: LoadOptions): Promise<Figures[][]> {
  const perTarget: Figures[][] = targets.map(() => []);
  for (let round = 0; round < o.rounds; round++) {
    progress(`round ${round + 1}/${o.rounds}: ${targets.length} targets, ${fixed(o.duration / o.rounds, 1)} s each`);
    for (const [i, target] of targets.entries()) {
      perTarget[i]!.push(await load(target.server, o.connections, o.duration / o.rounds, target.requests()));
    }
  }
  return perTarget;
}

/** One target's rounds as one set of figures: the median rate, percentiles over every round's samples, sums of counts. */
export function combineRounds(rounds: Figures[]): Figures {
  const sum = (f: (x: Figures) => number) => rounds.reduce((acc, x) => acc + f(x), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of rounds) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  // A round that answered nothing has no CPU per answer; it adds no answers either.
  const cpuKnown = rounds.every((r) => r.serverCpuMs !== null || r.ok === 0) && sum((r) => r.ok) > 0;
  const cpu = cpuKnown ? sum((r) => (r.serverCpuMs ?? 0) * r.ok) / sum((r) => r.ok) : null;
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    latencies,
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    statusCodes,
    seconds: sum((r) => r.seconds),
    serverCpuMs: cpu,
    clientCpuShare: median(rounds.map((r) => r.clientCpuShare)),
    eventLoopBusy: rounds.every((r) => r.eventLoopBusy !== null) ? median(rounds.map((r) => r.eventLoopBusy!)) : null,
  };
}

/** A markdown table with padded columns, so it reads the same in a terminal and in a file. */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const fixed = (n: number, digits = 2) => n.toFixed(digits);

/** Progress goes to stderr, so stdout carries only the report. */
export const progress = (line: string) => process.stderr.write(`  ${line}\n`);

/** Waits until the global log holds every record, so its integrator is not part of what is measured next. */
export async function logCaughtUp(server: ChildServer): Promise<void> {
  const started = performance.now();
  for (;;) {
    const doc = (await (await fetch(`${server.url}/v1/transparency`)).json()) as { counts: { records: number }; log: { tree_size: number } };
    if (doc.log.tree_size >= doc.counts.records) return;
    if (performance.now() - started > 5 * 60_000) throw new Error(`the log holds ${doc.log.tree_size} of ${doc.counts.records} records after 5 minutes`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
