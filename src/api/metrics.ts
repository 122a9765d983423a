// Prometheus metrics (prom-client), off unless configured (config.ts MetricsConfig): requests by
// route and status with their latency, the record path's commit batches and queue, the store's
// gauges (PostgreSQL pool, SQLite WAL and fsyncs), rate-limit fallbacks, Redis and database
// health. Names and meanings: docs/operations.md. Each app has its own registry.
//
// Cheap per request by construction: the hook is installed only when metrics are on, and each
// (route, method, status) keeps its prom-client children in nested maps, so a request costs two
// map lookups, one increment and one observation, without building label objects or keys.
import { createServer, type Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CommitObserver } from '../ledger/commit-queue.ts';
import type { StoreHealth } from '../domain/store-health.ts';
import type { App } from './types.ts';
import type { ReadGate } from './read-gate.ts';
import type { ReadCache } from './read-cache.ts';
import { readPacer } from '../runtime/loop-share.ts';
import type { ReadHandoff } from './read-handoff.ts';

export type MetricsSources = {
  store: StoreHealth;
  /** The record path's queue, once the decision service exists. */
  queueDepth: () => { waiting: number; inFlight: number };
  /** null when no Redis is configured. */
  redis: null | { ready: () => boolean; shared: () => boolean; fallbacks: () => number };
};

/** A database that does not answer a scrape's ping within this counts as down. */
const PING_TIMEOUT_MS = 1_000;

type Children = { count: Counter.Internal; seconds: Histogram.Internal<string> };

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly latency: Histogram<string>;
  private readonly byRoute = new Map<string, Map<string, Map<number, Children>>>();
  private readonly batchSize: Histogram<string>;
  private readonly commitSeconds: Histogram<string>;
  private readonly commitFailures: Counter<string>;
  private sources: MetricsSources | null = null;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'ledger_' });
    this.requests = new Counter({ name: 'ledger_http_requests_total', help: 'HTTP requests answered, by route (its pattern), method and status', labelNames: ['route', 'method', 'status'], registers });
    this.latency = new Histogram({
      name: 'ledger_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer, by route, method and status', labelNames: ['route', 'method', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    });
    this.batchSize = new Histogram({ name: 'ledger_commit_batch_requests', help: 'Record requests per commit batch (group commit: one transaction, one fsync); a replay or a refused request takes part without appending', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers });
    this.commitSeconds = new Histogram({
      name: 'ledger_commit_duration_seconds', help: 'Time of a commit batch from the store call until it is durable (the fsync included)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5], registers,
    });
    this.commitFailures = new Counter({ name: 'ledger_commit_failures_total', help: 'Commit batches that failed (their requests were answered with an error; nothing was recorded)', registers });
  }

  /** The record path's observer (ledger/commit-queue.ts). */
  readonly observeCommit: CommitObserver = (size, seconds, ok) => {
    if (!ok) return this.commitFailures.inc();
    this.batchSize.observe(size);
    this.commitSeconds.observe(seconds);
  };

  /** What the gauges read at each scrape, once the app's parts exist; series that do not apply are not registered. */
  connect(sources: MetricsSources): void {
    this.sources = sources;
    const registers = [this.registry];
    // The pool is read before the health ping takes a connection of its own (the scrape collects in this order).
    const { pool, readPool, wal } = sources.store.gauges();
    if (pool) this.poolGauges(registers);
    if (readPool) this.readPoolGauges(registers);
    if (wal) this.walGauges(registers);
    this.recordPathGauges(registers);
    if (sources.redis) this.redisGauges(registers);
  }

  /** Counts every answer of `app` (its onResponse hook). */
  install(app: App): void {
    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      const children = this.children(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode);
      children.count.inc();
      children.seconds.observe(reply.elapsedTime / 1000);
    });
  }

  private children(route: string, method: string, status: number): Children {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let children = byStatus.get(status);
    if (!children) {
      const labels = [route, method, String(status)];
      children = { count: this.requests.labels(...labels), seconds: this.latency.labels(...labels) };
      byStatus.set(status, children);
    }
    return children;
  }

  /** The text a scrape gets. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private recordPathGauges(registers: Registry[]): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'ledger_commit_queue_depth', help: 'Record requests waiting for a commit batch (state="waiting") and batches committing (state="in_flight")', labelNames: ['state'], registers,
      collect() {
        const depth = sources()?.queueDepth();
        if (!depth) return;
        this.set({ state: 'waiting' }, depth.waiting);
        this.set({ state: 'in_flight' }, depth.inFlight);
      },
    });
    new Gauge({
      name: 'ledger_database_up', help: '1 when the database answered a ping within 1 s at this scrape, else 0', registers,
      async collect() {
        const store = sources()?.store;
        if (store) this.set(await answers(store.ping(), PING_TIMEOUT_MS) ? 1 : 0);
      },
    });
  }

  private poolGauges(registers: Registry[]): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'ledger_postgres_pool_connections', help: 'PostgreSQL pool: open connections (state="total"), idle ones (state="idle"), and queries waiting for one (state="waiting")', labelNames: ['state'], registers,
      collect() {
        const pool = sources()?.store.gauges().pool;
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
  }

  private readPoolGauges(registers: Registry[]): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'ledger_postgres_read_pool_connections', help: 'PostgreSQL pool of the public reads (apart from the record path\'s): open connections (state="total"), idle ones (state="idle"), and queries waiting for one (state="waiting")', labelNames: ['state'], registers,
      collect() {
        const pool = sources()?.store.gauges().readPool;
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
  }

  /** The read cache's answers from copies, the copies it made, and their bytes now (read-cache.ts). */
  watchReadCache(cache: ReadCache): void {
    const registers = [this.registry];
    new Counter({
      name: 'ledger_read_cache_total', help: 'Public reads answered from a copy while reads queued (event="hit"), and copies made (event="stored")', labelNames: ['event'], registers,
      collect() {
        this.reset();
        this.inc({ event: 'hit' }, cache.counts.hits);
        this.inc({ event: 'stored' }, cache.counts.stored);
      },
    });
    new Gauge({
      name: 'ledger_read_cache_bytes', help: 'Bytes of the copies the read cache keeps now (LEDGER_READ_CACHE_MB bounds them)', registers,
      collect() {
        this.set(cache.size.bytes);
      },
    });
  }

  /** The read threads (read-handoff.ts): how many answer reads now, and the reads handed to them. */
  watchReadThreads(handoff: ReadHandoff): void {
    const registers = [this.registry];
    new Gauge({
      name: 'ledger_read_threads', help: 'Read threads configured (state="configured", LEDGER_READ_THREADS) and answering public reads now (state="ready")', labelNames: ['state'], registers,
      collect() {
        this.set({ state: 'configured' }, handoff.state.threads);
        this.set({ state: 'ready' }, handoff.state.ready);
      },
    });
    new Counter({
      name: 'ledger_read_thread_reads_total', help: 'Public reads handed to a read thread (a thread that stopped before answering one leaves it to the serving thread)', registers,
      collect() {
        this.reset();
        this.inc(handoff.state.answered);
      },
    });
  }

  /** The read gate's bounds, its load at each scrape, and the reads it refused (read-gate.ts). */
  watchReadGate(gate: ReadGate): void {
    const registers = [this.registry];
    new Gauge({
      name: 'ledger_read_gate_limit', help: 'Bounds of the public reads: reads at once in all (bound="concurrency") and per client (bound="per_client"), reads waiting (bound="queue"), the longest wait (bound="wait_seconds"), the time before a refusal is sent (bound="refusal_delay_seconds"), refusals held at once (bound="refusals_held"), the event loop\'s busy share below which reads run (bound="loop_share")', labelNames: ['bound'], registers,
      collect() {
        this.set({ bound: 'concurrency' }, gate.limits.concurrency);
        this.set({ bound: 'per_client' }, gate.limits.perClient);
        this.set({ bound: 'queue' }, gate.limits.queue);
        this.set({ bound: 'wait_seconds' }, gate.limits.waitMs / 1000);
        this.set({ bound: 'refusal_delay_seconds' }, gate.limits.refusalDelayMs / 1000);
        this.set({ bound: 'refusals_held' }, gate.limits.refusalsHeld);
        this.set({ bound: 'loop_share' }, readPacer.share);
      },
    });
    new Gauge({
      name: 'ledger_read_gate_reads', help: 'Public reads running (state="running"), waiting for a turn (state="waiting"), admitted and waiting for room on the event loop, or between slices of a long read (state="paced"), and refused, their refusal held before it is sent (state="held")', labelNames: ['state'], registers,
      collect() {
        this.set({ state: 'running' }, gate.load.running);
        this.set({ state: 'waiting' }, gate.load.waiting);
        this.set({ state: 'paced' }, readPacer.waitingCount);
        this.set({ state: 'held' }, gate.tarpit.held);
      },
    });
    new Counter({
      name: 'ledger_read_paced_turns_total', help: 'Slices of long public reads that waited for room while writes arrived (the loop share), on the serving thread and the read threads', registers,
      collect() {
        this.reset();
        this.inc(readPacer.pacing.turnsWaited);
      },
    });
    new Counter({
      name: 'ledger_read_gate_refused_total', help: 'Public reads refused by the read gate: by their client\'s bound (bound="client", 429) or the service\'s (bound="global", 503)', labelNames: ['bound'], registers,
      collect() {
        this.reset();
        this.inc({ bound: 'client' }, gate.refused.client);
        this.inc({ bound: 'global' }, gate.refused.global);
      },
    });
  }

  private walGauges(registers: Registry[]): void {
    const wal = () => this.sources?.store.gauges().wal;
    new Gauge({ name: 'ledger_sqlite_wal_bytes', help: 'Size of the SQLite write-ahead log file', registers, collect() { const w = wal(); if (w) this.set(w.bytes); } });
    new Counter({ name: 'ledger_sqlite_wal_fsyncs_total', help: 'fsyncs of the SQLite write-ahead log (one per commit batch)', registers, collect() { const w = wal(); if (w) this.reset(), this.inc(w.fsyncs); } });
    new Counter({ name: 'ledger_sqlite_wal_fsync_seconds_total', help: 'Time spent in those fsyncs', registers, collect() { const w = wal(); if (w) this.reset(), this.inc(w.fsyncSeconds); } });
    new Counter({ name: 'ledger_sqlite_checkpoints_total', help: 'WAL checkpoints run by the checkpointer; kind="truncate": those that emptied the WAL file', labelNames: ['kind'], registers,
      collect() {
        const w = wal();
        if (!w) return;
        this.reset();
        this.inc({ kind: 'all' }, w.checkpoints);
        this.inc({ kind: 'truncate' }, w.truncates);
      },
    });
  }

  private redisGauges(registers: Registry[]): void {
    const sources = () => this.sources;
    new Gauge({ name: 'ledger_redis_up', help: '1 while the rate limiter\'s Redis connection is ready, else 0 (absent without LEDGER_REDIS_URL)', registers, collect() { const r = sources()?.redis; if (r) this.set(r.ready() ? 1 : 0); } });
    new Gauge({ name: 'ledger_rate_limit_shared', help: '1 while rate-limit budgets are shared through Redis, 0 while each process counts its own (absent without LEDGER_REDIS_URL)', registers, collect() { const r = sources()?.redis; if (r) this.set(r.shared() ? 1 : 0); } });
    new Counter({ name: 'ledger_rate_limit_fallbacks_total', help: 'Times the rate limiter fell back to per-process budgets because Redis was unreachable', registers,
      collect() { const r = sources()?.redis; if (r) this.reset(), this.inc(r.fallbacks()); } });
  }
}

function answers(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  return Promise.race([work.then(() => true, () => false), late]).finally(() => clearTimeout(timer));
}

/** GET /metrics on the service's own port: hidden from the OpenAPI document (an operator's endpoint). */
export function metricsRoute(app: App, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await metrics.text();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}

/** A listener of its own that answers GET /metrics and 404 to everything else. */
export async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.text().then(({ contentType, body }) => {
      response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
    }, (err: Error) => {
      response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
