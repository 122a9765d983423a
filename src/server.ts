// Starts the service from a Config: open and migrate the store, compose the service (compose.ts),
// listen, then start the read threads (read-threads.ts), run the jobs, and shut down gracefully on
// SIGTERM/SIGINT (in-flight writes finish, nothing new is accepted).
import { buildApp, type LedgerApp } from './api/app.ts';
import { loggerOptions } from './api/logging.ts';
import { ConfigError, type Config } from './config.ts';
import { composeService, startJobs, type Job, type Service } from './compose.ts';
import { KeyringError } from './vault/service.ts';
import { openReadReplica, openStore, redactUrl, type OpenOptions } from './store/open.ts';
import { serveMetrics } from './api/metrics.ts';
import type { LedgerStore } from './store/port.ts';
import { LogRelay } from './runtime/log-relay.ts';
import { ReadThreads } from './read-threads.ts';
import { lowerV8Helpers } from './runtime/niceness.ts';
import { readPacer } from './runtime/loop-share.ts';

/** How long after the listen the read threads' state is logged, if they are not all ready sooner. */
const READ_THREADS_REPORT_MS = 5_000;

/** Opens and migrates the store; any failure (a path that cannot be created included) is one clear message. */
async function openMigrated(databaseUrl: string, options: OpenOptions): Promise<LedgerStore> {
  let store: LedgerStore | null = null;
  try {
    store = openStore(databaseUrl, options);
    await store.migrate();
    return store;
  } catch (err) {
    await store?.close().catch(() => undefined);
    throw new Error(`cannot open the database ${redactUrl(databaseUrl)}: ${(err as Error).message}`);
  }
}

export type RunningServer = { ledger: LedgerApp; store: LedgerStore; url: string; readThreads: ReadThreads | null; stop: () => Promise<void> };

type Log = LogRelay['write'];

export async function startServer(config: Config): Promise<RunningServer> {
  const pools = { readPoolSize: config.readBounds.poolSize };
  const store = await openMigrated(config.databaseUrl, pools);
  const readReplica = config.readDatabaseUrl ? openReadReplica(config.readDatabaseUrl, pools) : null;
  // What the start holds, closed in reverse if a later step fails (and at the stop, after the jobs).
  const held = new Held();
  held.add(() => store.close());
  if (readReplica) held.add(() => readReplica.close());
  // What is said before the app (and its logger) exists is held until it does (runtime/log-relay.ts).
  const relay = new LogRelay();
  const log = relay.write;
  const service = await held.orClose(composeService({ store, config, readReplica, log: relay }));
  held.add(() => service.close());
  await held.orClose(checkKeyring(service));
  const readThreads = readThreadsOf(config, service, log);
  const ledger = await buildApp({ ...service.parts, readHandoff: readThreads }, { logger: loggerOptions(config.logLevel) });
  if (config.readDatabaseUrl) log('info', 'public reads come from the read replica', { replica: redactUrl(config.readDatabaseUrl) });
  const requests = requestsJob(config, ledger, readThreads, log);
  const stopJobs = await held.orClose(startJobs(service.jobs(requests.job)), () => readThreads?.close());
  log('info', `market data: ${service.parts.market.description}`);
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= (async () => {
    await stopJobs();
    await held.close();
  })());
  return { ledger, store, url: requests.url(), readThreads, stop };
}

/** Resources a start has opened, closed in the reverse order. */
class Held {
  private readonly closers: (() => Promise<void>)[] = [];

  add(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await close();
  }

  /** `step`'s value; if it fails, `first` (what the step itself started) and then everything held are closed, and the error stands. */
  async orClose<T>(step: Promise<T>, first?: () => Promise<void> | undefined): Promise<T> {
    try {
      return await step;
    } catch (err) {
      await first?.();
      await this.close();
      throw err;
    }
  }
}

/**
 * The vault's keyring is checked against the database before anything listens: a wrong, malformed
 * or missing key stops the start (one line), rather than failing the first connect or sync.
 */
async function checkKeyring(service: Service): Promise<void> {
  await service.parts.keyring().catch((err) => {
    throw err instanceof KeyringError ? new ConfigError(err.message) : new Error(`cannot check the master key against the database: ${(err as Error).message}`);
  });
}

/** The read threads, not started yet (or null when configured off or on an in-memory database). */
function readThreadsOf(config: Config, service: Service, log: Log): ReadThreads | null {
  if (config.readBounds.threads === 0 || config.databaseUrl === 'sqlite::memory:') return null;
  return new ReadThreads({
    threads: config.readBounds.threads, heapMb: config.readBounds.threadHeapMb, data: { config, logVkey: service.logKey.vkey, pacing: readPacer.pacing.memory }, log,
  });
}

/**
 * Starts the read threads once the server listens, and waits for none of them: each builds an app
 * of its own at the lowest priority, which on a loaded machine takes longer than the serving
 * thread's whole start, so /healthz would wait on work that yields to everything. Until a thread
 * is ready its reads are answered here. Their state is logged when all are ready, or after a while.
 */
function startReadThreads(readThreads: ReadThreads, log: Log): void {
  // Most of what V8's helpers collect is then the read threads' garbage: they yield as those threads do.
  const helpers = lowerV8Helpers();
  void readThreads.start(READ_THREADS_REPORT_MS).then(() => {
    const { ready, threads } = readThreads.state;
    log('info', `public reads answered by ${ready} of ${threads} read threads${ready < threads ? ' (the others are answered here until their threads are ready)' : ''}; ${helpers} V8 helper threads at low priority`);
  });
}

/** Taking requests as a job: listen (then the documents and the metrics), and close the app, its read threads and the metrics. */
function requestsJob(config: Config, ledger: LedgerApp, readThreads: ReadThreads | null, log: Log): { job: Job; url: () => string } {
  let url = '';
  let metrics: Awaited<ReturnType<typeof serveMetrics>> | null = null;
  const job: Job = {
    name: 'requests',
    start: async () => {
      url = await ledger.app.listen({ port: config.port, host: config.host });
      if (readThreads) startReadThreads(readThreads, log);
      buildDocuments(ledger, log);
      metrics = ledger.metrics && config.metrics.port !== null ? await serveMetrics(ledger.metrics, config.metrics.host, config.metrics.port) : null;
      if (metrics) log('info', `metrics on ${metrics.url}`);
    },
    stop: async () => {
      await ledger.close();
      await readThreads?.close();
      await metrics?.close();
    },
  };
  return { job, url: () => url };
}

/**
 * The API's documents (OpenAPI, llms-full.txt, compressed once) and the docs pages are built on
 * their first request, a few hundred ms of the event loop and seconds of the thread pool: a serving
 * process builds them right after it listens, so that no reader's first request puts the writes
 * behind that block, and the start itself (a restart under load) does not wait for it. An app built
 * for a test pays only if it asks.
 */
function buildDocuments(ledger: LedgerApp, log: (level: 'warn', message: string) => void): void {
  void (async () => {
    for (const url of ['/v1/openapi.json', '/docs']) {
      const res = await ledger.app.inject({ method: 'GET', url });
      if (res.statusCode !== 200) log('warn', `building ${url} at start answered ${res.statusCode}; it is built on its first request instead`);
    }
  })().catch((err: Error) => {
    if (ledger.app.server.listening) log('warn', `building the documents at start failed (${err.message}); they are built on their first request instead`);
  });
}
