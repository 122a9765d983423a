// The benchmark harness: servers under test run in child processes (so the load generator in
// this process never shares their event loop), autocannon drives them, and the figures come
// back as one small record per measured target. Shared by every suite run from bench/run.ts.
import autocannon, { type Request } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
  /** 2xx responses per second over the measured window. */
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  /** Connection errors and timeouts (no HTTP status at all). */
  errors: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /** CPU time the server process used per 2xx answer (null where /proc is not available). */
  serverCpuMs: number | null;
};

/** A bad command-line flag: bench/run.ts prints it with the suite's usage, without a stack trace. */
export class UsageError extends Error {}

export type ChildServer = {
  url: string;
  /** CPU seconds (user + system) the server process has used so far, or null without /proc. */
  cpuSeconds: () => number | null;
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
    env,
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
        cpuSeconds: () => processCpuSeconds(child.pid!),
        kill: () => signalAndWait(child, 'SIGKILL', exited),
        stop: () => signalAndWait(child, 'SIGTERM', exited),
      });
    });
  });
}

/** utime + stime of a Linux process, from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s). */
function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  await exited;
}

/** Runs `requests` against the server for `seconds` and returns the figures. */
export async function load(server: ChildServer, connections: number, seconds: number, requests: Request[]): Promise<Figures> {
  const cpuBefore = server.cpuSeconds();
  const result = await autocannon({ url: server.url, connections, duration: seconds, pipelining: 1, timeout: 10, requests });
  const cpuAfter = server.cpuSeconds();
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
    seconds: result.duration,
    serverCpuMs: cpuBefore !== null && cpuAfter !== null && result['2xx'] > 0 ? ((cpuAfter - cpuBefore) * 1000) / result['2xx'] : null,
  };
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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One target's rounds as one set of figures: medians of rate and latencies, sums of counts. */
export function combineRounds(rounds: Figures[]): Figures {
  const sum = (f: (x: Figures) => number) => rounds.reduce((acc, x) => acc + f(x), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of rounds) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const cpu = rounds.every((r) => r.serverCpuMs !== null) ? sum((r) => r.serverCpuMs! * r.ok) / Math.max(1, sum((r) => r.ok)) : null;
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    statusCodes,
    seconds: sum((r) => r.seconds),
    serverCpuMs: cpu,
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
