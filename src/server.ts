// Starts the service from a Config: open and migrate the store, start the read threads
// (read-threads.ts), listen, and shut down gracefully on SIGTERM/SIGINT (in-flight writes
// finish, nothing new is accepted).
import { buildApp, type LedgerApp } from './api/app.ts';
import { loggerOptions } from './api/logging.ts';
import { ConfigError, type Config } from './config.ts';
import { compose } from './compose.ts';
import { signatureChecker } from './ledger/signing.ts';
import { loadServiceLogKey, loadWitnessPolicy, startIntegrator, startWitnessing } from './log/service.ts';
import { VerifierThread, warnWhenLate } from './ledger/verifier-thread.ts';
import { KeyringError } from './vault/service.ts';
import { startAnchoring } from './anchor/service.ts';
import { selectMarketData } from './market/select.ts';
import { startDeliverer } from './webhooks/service.ts';
import { openReadReplica, openStore, redactUrl, type OpenOptions } from './store/open.ts';
import { serveMetrics } from './api/metrics.ts';
import type { LedgerStore } from './store/port.ts';
import { LogRelay } from './runtime/log-relay.ts';
import { ReadThreads } from './read-threads.ts';
import { lowerV8Helpers } from './runtime/niceness.ts';
import { readPacer } from './runtime/loop-share.ts';

/** How long the start waits for its read threads before it listens without them (src/read-threads.ts). */
const READ_THREADS_START_WAIT_MS = 5_000;

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

export async function startServer(config: Config): Promise<RunningServer> {
  const market = selectMarketData(config.market);
  if (!market.ok) throw new ConfigError(market.error);
  const pools = { readPoolSize: config.readBounds.poolSize };
  const store = await openMigrated(config.databaseUrl, pools);
  const readReplica = config.readDatabaseUrl ? openReadReplica(config.readDatabaseUrl, pools) : null;
  // What is said before the app (and its logger) exists is held until it does (runtime/log-relay.ts).
  const relay = new LogRelay();
  const log = relay.write;
  const logKey = await loadServiceLogKey(config, {
    info: (message) => log('info', message),
    warn: (message) => log('warn', message),
    error: (message) => log('warn', message),
  }).catch(async (err) => {
    await readReplica?.close();
    await store.close();
    throw err;
  });
  const witnessPolicy = config.witnessPolicyFile ? await loadWitnessPolicy(config.witnessPolicyFile).catch(async (err) => {
    await readReplica?.close();
    await store.close();
    throw new ConfigError((err as Error).message);
  }) : null;
  const verifier = new VerifierThread({ onLate: warnWhenLate((message) => log('warn', message)) });
  const parts = compose({
    store, config, checkSignature: signatureChecker(store, verifier.verify), readReplica, logVkey: logKey.vkey, witnessPolicy, log: relay,
  }, { market: market.market });
  const readThreads = config.readBounds.threads > 0 && config.databaseUrl !== 'sqlite::memory:'
    ? new ReadThreads({ threads: config.readBounds.threads, heapMb: config.readBounds.threadHeapMb, data: { config, logVkey: logKey.vkey, pacing: readPacer.pacing.memory }, log })
    : null;
  // The vault's keyring is checked against the database before anything listens: a wrong, malformed
  // or missing key stops the start (one line), rather than failing the first connect or sync.
  await parts.keyring().catch(async (err) => {
    await verifier.close();
    await readReplica?.close();
    await store.close();
    throw err instanceof KeyringError ? new ConfigError(err.message) : new Error(`cannot check the master key against the database: ${(err as Error).message}`);
  });
  await readThreads?.start(READ_THREADS_START_WAIT_MS);
  const threads = readThreads?.state;
  if (threads) {
    // Most of what V8's helpers collect is then the read threads' garbage: they yield as those threads do.
    const helpers = lowerV8Helpers();
    log('info', `public reads answered by ${threads.ready} of ${threads.threads} read threads${threads.ready < threads.threads ? ' (the others are answered here until their threads are ready)' : ''}; ${helpers} V8 helper threads at low priority`);
  }
  const ledger = await buildApp({ ...parts, readHandoff: readThreads }, { logger: loggerOptions(config.logLevel) });
  if (config.readDatabaseUrl) log('info', 'public reads come from the read replica', { replica: redactUrl(config.readDatabaseUrl) });
  const url = await ledger.app.listen({ port: config.port, host: config.host }).catch(async (err: unknown) => {
    await readThreads?.close();
    throw err;
  });
  buildDocuments(ledger, log);
  const metrics = ledger.metrics && config.metrics.port !== null ? await serveMetrics(ledger.metrics, config.metrics.host, config.metrics.port) : null;
  if (metrics) log('info', `metrics on ${metrics.url}`);
  parts.brokerSync.start();
  const jobLog = { info: (m: string) => log('info', m), warn: (m: string) => log('warn', m), error: (m: string) => log('error', m) };
  const witnessing = witnessPolicy ? startWitnessing(store, witnessPolicy, jobLog) : null;
  const integrator = startIntegrator(store, logKey, jobLog, witnessing ? () => witnessing.wake() : undefined);
  const anchoring = startAnchoring(store, config.anchor, (m) => log('warn', m));
  parts.pricing.start();
  parts.directoryJob.start();
  log('info', `market data: ${parts.market.description}`);
  const webhooks = startDeliverer({ store, config: config.webhooks, keyring: parts.keyring, baseUrl: config.baseUrl, log });
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= (async () => {
    await parts.brokerSync.stop();
    await parts.pricing.stop();
    await parts.directoryJob.stop();
    await ledger.close();
    await readThreads?.close();
    await webhooks.stop();
    await metrics?.close();
    await anchoring.stop();
    await witnessing?.stop();
    await integrator.stop();
    await verifier.close();
    await readReplica?.close();
    await store.close();
  })());
  return { ledger, store, url, readThreads, stop };
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
