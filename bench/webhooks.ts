// The webhooks benchmark, on each store (the real service in a child process, its deliverer
// running; 20 agents with one endpoint each, receivers in this process that check every
// delivery with standardwebhooks' Webhook.verify):
// (a) delivery lag: unsigned writes paced at --rate a second for --seconds; for each 201, the time
//     until its decision.recorded delivery arrives at the receiver. Goal: p99 under 1 s at 100/s.
// (b) writes while every receiver fails: the same pacing with every receiver answering 500 (and
//     so every event being retried); the writes' p99 against (a)'s, measured in the same run, as
//     the baseline. Recording never waits on a delivery, so the ratio should stay near 1.
//
//   npm run bench -- webhooks [--rate 100] [--seconds 20] [--no-postgres] [--profile <dir>]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/domain/clock.ts';
import { loadLogKey } from '../src/log/key.ts';
import { openStore } from '../src/store/open.ts';
import { webhookEndpoints } from '../src/webhooks/service.ts';
import { parseKeyring } from '../src/vault/vault.ts';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, DECISION } from './decision-load.ts';
import { benchPath, fixed, integerFlag, markdownTable, progress, quantile, startChild, suiteFlags, type ChildServer } from './harness.ts';

export type WebhooksBenchOptions = { rate: number; seconds: number; postgres: boolean; profile: string | null };

export function webhooksOptions(argv: string[]): WebhooksBenchOptions {
  const v = suiteFlags(argv, {
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
    'no-postgres': { type: 'boolean', default: false },
    profile: { type: 'string' },
  });
  return { rate: integerFlag('rate', v.rate, 1), seconds: integerFlag('seconds', v.seconds, 1), postgres: !v['no-postgres'], profile: v.profile ?? null };
}

const GOAL_LAG_P99_MS = 1000;
const AGENTS = 20;
const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');
type Kind = BenchDatabase['kind'];

/** Receivers: one server, one path per endpoint; arrival time of each record id's first delivery. */
type Receivers = { url: string; secrets: Map<string, string>; arrivals: Map<string, number>; failing: boolean; rejected: number; server: Server };

async function startReceivers(): Promise<Receivers> {
  const r: Receivers = { url: '', secrets: new Map(), arrivals: new Map(), failing: false, rejected: 0, server: null as unknown as Server };
  r.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const secret = r.secrets.get(req.url ?? '');
      let event: { data: { id: string } };
      try {
        event = new Webhook(secret ?? 'whsec_AAAA').verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as typeof event;
      } catch {
        r.rejected++;
        return void res.writeHead(400).end();
      }
      if (r.failing) return void res.writeHead(500).end();
      if (!r.arrivals.has(event.data.id)) r.arrivals.set(event.data.id, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`;
  return r;
}

type Written = { id: string; ackedAt: number; latency: number };

/** Unsigned writes paced at `rate`/s for `seconds`, round-robin over the agents. */
async function pacedWrites(server: ChildServer, agents: { secret: string }[], rate: number, seconds: number, tag: string): Promise<{ written: Written[]; non201: number }> {
  const written: Written[] = [];
  let non201 = 0;
  const body = JSON.stringify(DECISION);
  const writes: Promise<void>[] = [];
  const begin = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = begin + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    writes.push(fetch(`${server.url}/v1/decisions`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agents[i % agents.length]!.secret}`, 'idempotency-key': `${tag}-${i}` },
    }).then(async (res) => {
      const ackedAt = performance.now();
      const text = await res.text();
      if (res.status !== 201) return void non201++;
      written.push({ id: (JSON.parse(text) as { id: string }).id, ackedAt, latency: ackedAt - sent });
    }));
  }
  await Promise.all(writes);
  return { written, non201 };
}

type Row = { kind: Kind; writes: number; lagP50: number; lagP99: number; lagMax: number; missing: number; writeP99: number; failingWrites: number; failingWriteP99: number; non201: number; rejected: number };

async function run(kind: Kind, o: WebhooksBenchOptions): Promise<Row> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  const keyDir = mkdtempSync(join(tmpdir(), 'ledger-bench-logkey-'));
  const receivers = await startReceivers();
  let server: ChildServer | null = null;
  try {
    const logKey = await loadLogKey({ keyFile: null, dataDir: keyDir, origin: 'bench.test/log' });
    if (!logKey.ok) throw new Error(logKey.error);
    const agents = await createAgents(db.url, AGENTS);
    await registerEndpoints(db.url, agents.map((a) => a.handle), receivers);
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, {
      LEDGER_LOG_KEY_FILE: logKey.value.source.path, LEDGER_LOG_ORIGIN: 'bench.test/log', LEDGER_MASTER_KEY: MASTER_KEY,
      LEDGER_WEBHOOKS_ALLOW_PRIVATE: 'true', LEDGER_WRITE_LIMIT_PER_MIN: '1000000000', LEDGER_READ_LIMIT_PER_MIN: '1000000000',
    }), o.profile);
    const tag = `wb${process.pid}-${Date.now().toString(36)}`;
    progress(`${storeName(kind)}: (a) ${o.rate} writes/s for ${o.seconds} s, receivers answering 204`);
    const healthy = await pacedWrites(server, agents, o.rate, o.seconds, `${tag}-a`);
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline && healthy.written.some((w) => !receivers.arrivals.has(w.id))) await new Promise((r) => setTimeout(r, 50));
    const lags = healthy.written.filter((w) => receivers.arrivals.has(w.id)).map((w) => Math.max(0, receivers.arrivals.get(w.id)! - w.ackedAt)).sort((a, b) => a - b);
    progress(`${storeName(kind)}: (b) ${o.rate} writes/s for ${o.seconds} s, every receiver answering 500`);
    receivers.failing = true;
    const failing = await pacedWrites(server, agents, o.rate, o.seconds, `${tag}-b`);
    const p99 = (ws: Written[]) => quantile(ws.map((w) => w.latency).sort((a, b) => a - b), 0.99);
    return {
      kind, writes: healthy.written.length, lagP50: quantile(lags, 0.5), lagP99: quantile(lags, 0.99), lagMax: lags[lags.length - 1] ?? 0,
      missing: healthy.written.length - lags.length, writeP99: p99(healthy.written), failingWrites: failing.written.length,
      failingWriteP99: p99(failing.written), non201: healthy.non201 + failing.non201, rejected: receivers.rejected,
    };
  } finally {
    await server?.stop();
    receivers.server.closeAllConnections();
    receivers.server.close();
    await db.remove();
    rmSync(keyDir, { recursive: true, force: true });
  }
}

/** One endpoint per agent, each on its own receiver path, registered through the wing's use case. */
async function registerEndpoints(databaseUrl: string, handles: string[], receivers: Receivers): Promise<void> {
  const store = openStore(databaseUrl);
  try {
    await store.migrate();
    const ring = parseKeyring(MASTER_KEY);
    if (!ring.ok) throw new Error(ring.error.message);
    const config = loadConfig({ LEDGER_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    const endpoints = webhookEndpoints({ store, config: config.webhooks, keyring: async () => ring.value, clock: systemClock });
    for (const [i, handle] of handles.entries()) {
      const agent = await store.findAgentByHandle(handle);
      const created = await endpoints.create(agent!, { url: `${receivers.url}/r${i}`, events: ['decision.recorded'] });
      if (!created.ok) throw new Error(created.error.message);
      receivers.secrets.set(`/r${i}`, created.value.secret);
    }
  } finally {
    await store.close();
  }
}

export async function webhooksBench(o: WebhooksBenchOptions): Promise<string> {
  const notes: string[] = [];
  const rows: Row[] = [];
  for (const kind of await benchStores(o.postgres, notes)) rows.push(await run(kind, o));
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    `# webhooks benchmark, ${new Date().toISOString()}`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg().map((l) => fixed(l, 1)).join(' ')}.`,
    '',
    `## (a) Delivery lag: from the 201 to the receiver, at ${o.rate} writes/s for ${o.seconds} s (${AGENTS} agents, one endpoint each)`,
    '',
    markdownTable(['store', 'writes', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'not delivered in 10 s', 'write p99 ms (baseline)', 'lag p99 / write p99', `p99 < ${GOAL_LAG_P99_MS} ms`],
      rows.map((r) => [storeName(r.kind), n(r.writes), fixed(r.lagP50, 0), fixed(r.lagP99, 0), fixed(r.lagMax, 0), String(r.missing), fixed(r.writeP99, 1),
        fixed(r.lagP99 / r.writeP99, 1), r.lagP99 < GOAL_LAG_P99_MS && r.missing === 0 ? 'met' : 'missed'])),
    '',
    `## (b) Writes while every receiver answers 500, against (a)'s writes`,
    '',
    markdownTable(['store', 'writes', 'write p99 ms', 'healthy write p99 ms', 'ratio', 'non-201', 'signatures rejected'],
      rows.map((r) => [storeName(r.kind), n(r.failingWrites), fixed(r.failingWriteP99, 1), fixed(r.writeP99, 1), fixed(r.failingWriteP99 / r.writeP99, 2), String(r.non201), String(r.rejected)])),
    '',
    'Lag is measured in this process: the 201 read by the client to the delivery read by the receiver (both on loopback), so it includes the fan-out poll (every 100 ms), the',
    'outbox writes and the signing. Each receiver verifies every delivery with standardwebhooks before it counts.',
    ...(notes.length > 0 ? ['', ...notes] : []),
  ].join('\n');
}
