// Starts the service from a Config: open and migrate the store, listen, and shut down
// gracefully on SIGTERM/SIGINT (in-flight writes finish, nothing new is accepted).
import { buildApp, type LedgerApp } from './api/app.ts';
import { loggerOptions } from './api/logging.ts';
import { ConfigError, type Config } from './config.ts';
import { signatureChecker } from './ledger/signing.ts';
import { loadServiceLogKey, loadWitnessPolicy, startIntegrator, startWitnessing } from './log/service.ts';
import { VerifierThread, warnWhenLate } from './ledger/verifier-thread.ts';
import { KeyringError, keyringLoader, SyncWorker } from './brokers/service.ts';
import { startAnchoring } from './anchor/service.ts';
import { DEFAULT_SYNTHETIC_SEED, selectMarketData } from './market/select.ts';
import { SyntheticMarketData } from './market/synthetic.ts';
import { pricingService } from './market/service.ts';
import { startDeliverer } from './webhooks/service.ts';
import { openReadReplica, openStore, redactUrl, type OpenOptions } from './store/open.ts';
import { serveMetrics } from './api/metrics.ts';
import type { LedgerStore } from './store/port.ts';

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

export async function startServer(config: Config): Promise<{ ledger: LedgerApp; store: LedgerStore; url: string; stop: () => Promise<void> }> {
  const market = selectMarketData(config.market);
  if (!market.ok) throw new ConfigError(market.error);
  const pools = { readPoolSize: config.readBounds.poolSize };
  const store = await openMigrated(config.databaseUrl, pools);
  const readReplica = config.readDatabaseUrl ? openReadReplica(config.readDatabaseUrl, pools) : null;
  // The key is loaded before the app (which publishes its vkey) and its logger exist: what it says is logged once they do.
  const keyNotes: { level: 'info' | 'warn'; message: string }[] = [];
  const logKey = await loadServiceLogKey(config, {
    info: (message) => keyNotes.push({ level: 'info', message }),
    warn: (message) => keyNotes.push({ level: 'warn', message }),
    error: (message) => keyNotes.push({ level: 'warn', message }),
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
  // The vault's keyring is checked against the database before anything listens: a wrong, malformed
  // or missing key stops the start (one line), rather than failing the first connect or sync.
  const keyring = keyringLoader(config.brokers, (level, message) => keyNotes.push({ level: level === 'info' ? 'info' : 'warn', message }), store);
  await keyring().catch(async (err) => {
    await readReplica?.close();
    await store.close();
    throw err instanceof KeyringError ? new ConfigError(err.message) : new Error(`cannot check the master key against the database: ${(err as Error).message}`);
  });
  const verifier = new VerifierThread({ onLate: warnWhenLate((message) => ledger.app.log.warn(message)) });
  const synthetic = new SyntheticMarketData(config.market.LEDGER_SYNTHETIC_SEED || DEFAULT_SYNTHETIC_SEED);
  const pricing = pricingService(store, market.market, (level, message) => ledger.app.log[level](message), { facts: { benchmark: config.performance.benchmark } }, synthetic);
  const ledger = await buildApp({
    pricingStatus: () => pricing.status(),
    market: market.market,
    store,
    config,
    checkSignature: signatureChecker(store, verifier.verify),
    logger: loggerOptions(config.logLevel),
    logVkey: logKey.vkey,
    witnessPolicy,
    readReplica,
    keyring,
  });
  for (const note of keyNotes) ledger.app.log[note.level](note.message);
  if (config.readDatabaseUrl) ledger.app.log.info({ replica: redactUrl(config.readDatabaseUrl) }, 'public reads come from the read replica');
  const url = await ledger.app.listen({ port: config.port, host: config.host });
  const metrics = ledger.metrics && config.metrics.port !== null ? await serveMetrics(ledger.metrics, config.metrics.host, config.metrics.port) : null;
  if (metrics) ledger.app.log.info(`metrics on ${metrics.url}`);
  const brokerSync = new SyncWorker(ledger.brokers, config.brokers.syncIntervalS, (level, message, fields) => ledger.app.log[level](fields ?? {}, message));
  brokerSync.start();
  const witnessing = witnessPolicy ? startWitnessing(store, witnessPolicy, {
    info: (m) => ledger.app.log.info(m), warn: (m) => ledger.app.log.warn(m), error: (m) => ledger.app.log.error(m),
  }) : null;
  const log = startIntegrator(store, logKey, {
    info: (m) => ledger.app.log.info(m), warn: (m) => ledger.app.log.warn(m), error: (m) => ledger.app.log.error(m),
  }, witnessing ? () => witnessing.wake() : undefined);
  const anchoring = startAnchoring(store, config.anchor, (m) => ledger.app.log.warn(m));
  pricing.start();
  ledger.directoryJob.start();
  ledger.app.log.info(`market data: ${market.market.description}`);
  const webhookLog = (level: 'info' | 'warn' | 'error', message: string) => ledger.app.log[level](message);
  const webhooks = startDeliverer({ store, config: config.webhooks, keyring, baseUrl: config.baseUrl, log: webhookLog });
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= (async () => {
    await brokerSync.stop();
    await pricing.stop();
    await ledger.directoryJob.stop();
    await ledger.close();
    await webhooks.stop();
    await metrics?.close();
    await anchoring.stop();
    await witnessing?.stop();
    await log.stop();
    await verifier.close();
    await readReplica?.close();
    await store.close();
  })());
  return { ledger, store, url, stop };
}
