// The broker wing composed from the configuration: the vault's master keyring (loaded once and
// checked against the database; a generated key is announced once, with where it is and that it
// must be backed up), the broker endpoints, the connections use case, and the periodic sync
// worker the server starts.
import type { BrokerConfig } from '../config.ts';
import type { Clock } from '../ledger/clock.ts';
import type { LedgerStore } from '../store/port.ts';
import { BrokerConnections } from './connections.ts';
import type { BrokerEndpoints, BrokerLog } from './sync.ts';
import { verifyKeyring } from './keyring-check.ts';
import { loadMasterKeyring, type Keyring } from './vault.ts';

export function brokerEndpoints(config: BrokerConfig): BrokerEndpoints {
  const partner = config.snaptradeClientId && config.snaptradeConsumerKey
    ? { clientId: config.snaptradeClientId, consumerKey: config.snaptradeConsumerKey }
    : null;
  return { alpacaUrl: config.alpacaTradingUrl, snaptrade: partner ? { url: config.snaptradeUrl, partner } : null };
}

/** The keyring cannot be used: not found, malformed, or not the key the database's secrets were sealed with. One line, no key material. */
export class KeyringError extends Error {}

/**
 * Loads the master keyring on first use, checks it against the database (keyring-check.ts) and
 * keeps it; throws a KeyringError (one clear line) when it cannot be used. The server calls it at
 * start, so a node never runs with a wrong key. The webhook wing uses it too.
 */
export function keyringLoader(config: BrokerConfig, log: BrokerLog, store: LedgerStore): () => Promise<Keyring> {
  let loading: Promise<Keyring> | null = null;
  return () => (loading ??= (async () => {
    const r = await loadMasterKeyring({
      env: { LEDGER_MASTER_KEY: config.masterKey ?? undefined, LEDGER_MASTER_KEY_FILE: config.masterKeyFile ?? undefined },
      dataDir: config.dataDir,
    });
    if (!r.ok) throw new KeyringError(r.error.message);
    const source = r.value.source;
    const checked = await verifyKeyring(r.value.ring, store.vault, new Date().toISOString());
    if (!checked.ok) throw new KeyringError(`${source.kind === 'env' ? 'LEDGER_MASTER_KEY' : `master key file ${source.path}`}: ${checked.error.message}`);
    if (source.kind === 'generated') {
      log('warn', `generated the master key at ${source.path}, which seals broker credentials and webhook secrets: back it up (without it, they cannot be opened), or set LEDGER_MASTER_KEY / LEDGER_MASTER_KEY_FILE`);
    } else if (source.kind === 'file' && source.looseMode) {
      log('warn', `the master key file ${source.path} is readable by others: chmod 600 it`);
    }
    return r.value.ring;
  })().catch((err: unknown) => {
    loading = null;
    throw err;
  }));
}

export function brokerConnections(input: { store: LedgerStore; config: BrokerConfig; siteUrl: string; clock: Clock; log: BrokerLog; keyring?: () => Promise<Keyring> }): BrokerConnections {
  return new BrokerConnections({
    store: input.store,
    brokers: input.store.brokers,
    clock: input.clock,
    keyring: input.keyring ?? keyringLoader(input.config, input.log, input.store),
    endpoints: brokerEndpoints(input.config),
    log: input.log,
    siteUrl: input.siteUrl,
  });
}

/**
 * Syncs every connection that is not disconnected or pending, one after another, every
 * `intervalS` seconds (0: never). A connection another node is syncing is skipped this round.
 */
export class SyncWorker {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly connections: BrokerConnections, private readonly intervalS: number, private readonly log: BrokerLog) {}

  start(): void {
    if (this.intervalS <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.intervalS * 1000);
    this.timer.unref();
  }

  /** One round now (a round already running is joined, not doubled). */
  runOnce(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return (this.round ??= this.syncAll().finally(() => {
      this.round = null;
    }));
  }

  private async syncAll(): Promise<void> {
    try {
      for (const c of await this.connections.listSyncable()) {
        if (this.stopped) return;
        await this.connections.syncNow(c.id);
      }
    } catch (err) {
      this.log('error', 'broker sync round failed', { error: (err as Error).message });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
    await this.connections.drain();
  }
}
