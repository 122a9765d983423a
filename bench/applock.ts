// The append-lock benchmark (docs/log.md, "/v1/ledger ordering and the per-schema append lock"):
// PostgreSQL write throughput of unsigned POST /v1/decisions for many agents, with the per-schema
// append lock as shipped (taken late, after the facts are read) against the lock taken at BEGIN
// (before this change) and against no lock at all, on 1 node and on N nodes (`ledger serve`
// processes, test/support/ledger-node.ts) sharing one schema. Each variant is a cluster of N nodes
// on a fresh schema of its own; "1 node" loads only its first node (the others idle, one of them
// perhaps integrating the log). The other two variants are the test support's preload
// (no-append-lock.mjs), which no deployment loads. Rounds are interleaved (order reversed every
// other round), and each round gives each variant's ratio to the shipped lock per node count.
import type { Request } from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fixed, integerFlag, load, markdownTable, processCpuSeconds, progress, quantile, suiteFlags, type Figures, type LoadOptions,
} from './harness.ts';
import { median, medianInterval } from './stats.ts';
import { freshPostgres, postgresProblem, type BenchDatabase } from './databases.ts';
import { createAgents, unsignedWrites, type Acknowledged } from './decision-load.ts';
import { LedgerNode } from '../test/support/ledger-node.ts';
import { noAppendLockEnv } from '../test/support/cluster.ts';
import { freePort } from '../test/support/ports.ts';

export type ApplockOptions = Omit<LoadOptions, 'profileDir'> & {
  /** Nodes of each cluster; the N of "N nodes". */
  nodes: number;
  agents: number;
  /** Batches each node runs at once without the lock (the lock makes more than 1 pointless). */
  inFlight: number;
};

export function applockOptions(argv: string[]): ApplockOptions {
  const values = suiteFlags(argv, {
    duration: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    agents: { type: 'string', default: '200' },
    nodes: { type: 'string', default: '3' },
    'in-flight': { type: 'string', default: '1' },
  });
  return {
    duration: integerFlag('duration', values.duration, 1),
    rounds: integerFlag('rounds', values.rounds, 1),
    warmup: integerFlag('warmup', values.warmup, 0),
    connections: integerFlag('connections', values.connections, 1),
    agents: integerFlag('agents', values.agents, 1),
    nodes: integerFlag('nodes', values.nodes, 2),
    inFlight: integerFlag('in-flight', values['in-flight'], 1),
  };
}

type Mode = 'late' | 'early' | 'off';
const MODES: Mode[] = ['late', 'early', 'off'];
const MODE_LABEL: Record<Mode, string> = { late: 'lock late (shipped)', early: 'lock at BEGIN (before)', off: 'no lock' };

type Variant = { mode: Mode; db: BenchDatabase; dir: string; nodes: LedgerNode[]; writes: () => Request[]; acked: Acknowledged };

function modeEnv(mode: Mode, o: ApplockOptions): Record<string, string> {
  if (mode === 'late') return {};
  return mode === 'off' ? noAppendLockEnv(o.inFlight) : { ...noAppendLockEnv(1), LEDGER_TEST_APPEND_LOCK: 'early' };
}

async function startVariant(mode: Mode, o: ApplockOptions): Promise<Variant> {
  const db = freshPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-applock-'));
  const variant: Variant = { mode, db, dir, nodes: [], writes: () => [], acked: new Set() };
  progress(`${MODE_LABEL[mode]}: ${o.agents} agents on a fresh schema, ${o.nodes} nodes`);
  const agents = await createAgents(db.url, o.agents);
  variant.writes = unsignedWrites(agents, variant.acked);
  const env = { LEDGER_DATABASE_URL: db.url, LEDGER_WRITE_LIMIT_PER_MIN: '1000000000', ...modeEnv(mode, o) };
  for (let i = 0; i < o.nodes; i++) variant.nodes.push(new LedgerNode(`${mode}-${i + 1}`, await freePort(), env, dir));
  await Promise.all(variant.nodes.map((n) => n.start()));
  return variant;
}

/** Load spread over the first `k` nodes (connections split evenly), as one set of figures. */
async function loadNodes(v: Variant, k: number, seconds: number, connections: number): Promise<Figures> {
  const cpu = () => v.nodes.reduce((sum, n) => sum + (processCpuSeconds(n.pid!) ?? 0), 0);
  const before = cpu();
  const parts = await Promise.all(v.nodes.slice(0, k).map((node, i) => load(
    { url: node.url, pid: node.pid!, cpuSeconds: () => null, eventLoop: async () => null, kill: async () => undefined, stop: async () => undefined },
    Math.floor(connections / k) + (i < connections % k ? 1 : 0), seconds, v.writes(),
  )));
  const ok = parts.reduce((s, p) => s + p.ok, 0);
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const statusCodes: Record<string, number> = {};
  for (const p of parts) for (const [code, n] of Object.entries(p.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    rps: parts.reduce((s, p) => s + p.rps, 0),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    latencies,
    ok,
    non2xx: parts.reduce((s, p) => s + p.non2xx, 0),
    errors: parts.reduce((s, p) => s + p.errors, 0),
    statusCodes,
    seconds,
    serverCpuMs: ok > 0 ? ((cpu() - before) * 1000) / ok : null,
    clientCpuShare: median(parts.map((p) => p.clientCpuShare)),
    eventLoopBusy: null,
  };
}

/** The distinct messages of the nodes' warning and error log lines (JSON, pino), with counts. */
function nodeWarnings(nodes: LedgerNode[]): string[] {
  const counts = new Map<string, number>();
  for (const line of nodes.flatMap((n) => n.output.split('\n'))) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      // The nodes have no OpenTimestamps calendar (ledger-node.ts): that warning says nothing here.
      if ((entry.level ?? 0) < 40 || entry.msg?.startsWith('anchoring:')) continue;
      const text = `${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`.slice(0, 160);
      counts.set(text, (counts.get(text) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }
  return [...counts].slice(0, 5).map(([text, n]) => `${n}× ${text}`);
}

type Cell = { k: number; mode: Mode; rounds: Figures[] };

export async function applockBench(o: ApplockOptions): Promise<string> {
  const problem = await postgresProblem();
  if (problem) return `# Append lock\n\nPostgreSQL unreachable: ${problem}\n`;
  const loadBefore = loadavg();
  const variants: Variant[] = [];
  try {
    for (const mode of MODES) variants.push(await startVariant(mode, o));
    const counts = [1, o.nodes];
    const cells: Cell[] = counts.flatMap((k) => MODES.map((mode) => ({ k, mode, rounds: [] as Figures[] })));
    const variantOf = (mode: Mode) => variants.find((v) => v.mode === mode)!;
    for (const cell of cells) {
      progress(`warm-up: ${cell.k} node(s), ${MODE_LABEL[cell.mode]}`);
      if (o.warmup > 0) await loadNodes(variantOf(cell.mode), cell.k, o.warmup, o.connections);
    }
    const seconds = o.duration / o.rounds;
    for (let round = 0; round < o.rounds; round++) {
      progress(`round ${round + 1}/${o.rounds}: ${cells.length} targets, ${fixed(seconds, 1)} s each, load ${loadavg().map((l) => fixed(l)).join(' ')}`);
      const order = round % 2 === 0 ? cells : counts.flatMap((k) => cells.filter((c) => c.k === k).reverse());
      for (const cell of order) cell.rounds.push(await loadNodes(variantOf(cell.mode), cell.k, seconds, o.connections));
    }
    const loadAfter = loadavg();
    const checks: string[] = [];
    for (const v of variants) {
      for (const n of v.nodes) await n.kill();
      const check = await v.db.check(v.acked);
      checks.push(`${MODE_LABEL[v.mode]}: ${check.found} of ${check.acked} acknowledged ids in the database (${check.records} records)`);
      const warnings = nodeWarnings(v.nodes);
      if (warnings.length > 0) checks.push(`${MODE_LABEL[v.mode]}, the nodes' warnings: ${warnings.join('; ')}`);
    }
    return report(o, cells, counts, loadBefore, loadAfter, checks, await variants[0]!.db.durability());
  } finally {
    for (const v of variants) {
      await Promise.all(v.nodes.map((n) => n.kill()));
      await v.db.remove();
      rmSync(v.dir, { recursive: true, force: true });
    }
  }
}

function report(o: ApplockOptions, cells: Cell[], counts: number[], before: number[], after: number[], checks: string[], durability: string): string {
  const cellOf = (k: number, mode: Mode) => cells.find((c) => c.k === k && c.mode === mode)!;
  const combined = (c: Cell) => {
    const latencies = c.rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const ok = c.rounds.reduce((s, r) => s + r.ok, 0);
    const cpu = c.rounds.reduce((s, r) => s + (r.serverCpuMs ?? 0) * r.ok, 0) / Math.max(1, ok);
    const failed = c.rounds.reduce((s, r) => s + r.non2xx + r.errors, 0);
    return { rps: median(c.rounds.map((r) => r.rps)), p99: quantile(latencies, 0.99), cpu, failed, ok };
  };
  const rows = cells.map((c) => {
    const f = combined(c);
    const codes = Object.entries(c.rounds.reduce<Record<string, number>>((acc, r) => {
      for (const [code, n] of Object.entries(r.statusCodes)) if (!code.startsWith('2')) acc[code] = (acc[code] ?? 0) + n;
      return acc;
    }, {})).map(([code, n]) => `${n}×${code}`).join(' ');
    return [`${c.k} node${c.k > 1 ? 's' : ''}, ${MODE_LABEL[c.mode]}`, fixed(f.rps, 0), fixed(f.p99, 1), fixed(f.cpu, 3),
      String(f.ok), `${f.failed}${codes ? ` (${codes})` : ''}`];
  });
  const ratioRows = counts.flatMap((k) => (['early', 'off'] as const).map((mode) => {
    const on = cellOf(k, 'late').rounds;
    const off = cellOf(k, mode).rounds;
    const rps = on.map((r, i) => off[i]!.rps / r.rps);
    const p99 = on.map((r, i) => off[i]!.p99 / r.p99);
    const interval = medianInterval(rps);
    return [`${k} node${k > 1 ? 's' : ''}: ${MODE_LABEL[mode]}`, fixed(median(rps)), interval ? `${fixed(interval.low)} to ${fixed(interval.high)}` : 'too few rounds',
      `${fixed(Math.min(...rps))} to ${fixed(Math.max(...rps))}`, fixed(median(p99))];
  }));
  return [
    '# Append lock: PostgreSQL writes with the per-schema append lock late (shipped), at BEGIN, and without it',
    '',
    `${o.nodes} nodes per cluster, ${o.agents} agents, ${o.connections} connections, ${o.rounds} rounds of ${fixed(o.duration / o.rounds, 1)} s per target,`,
    `no lock with ${o.inFlight} batch(es) in flight per node. Load average ${before.map((l) => fixed(l)).join(' ')} before, ${after.map((l) => fixed(l)).join(' ')} after. ${durability}.`,
    '',
    markdownTable(['target', 'req/s (median round)', 'p99 ms', 'node CPU ms/req', '2xx', 'failed'], rows),
    '',
    markdownTable(['nodes: variant', 'req/s / shipped (median)', '95% interval', 'range of rounds', 'p99 / shipped (median)'], ratioRows),
    '',
    ...checks.map((c) => `- ${c}`),
    '',
  ].join('\n');
}
