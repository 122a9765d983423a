// The broker wing composed from the configuration: the vault's master keyring (loaded once; a
// generated key is announced once, with where it is and that it must be backed up), the broker
// endpoints, the connections use case, and the periodic sync worker the server starts.
import type { BrokerConfig } from '../config.ts';
import type { Clock } from '../ledger/clock.ts';
import { brokerStoreOf } from '../store/brokers.ts';
import type { LedgerStore } from '../store/port.ts';
import { BrokerConnections } from './connections.ts';
import type { BrokerEndpoints, BrokerLog } from './sync.ts';
import { loadMasterKeyring, type Keyring } from './vault.ts';

export function brokerEndpoints(config: BrokerConfig): BrokerEndpoints {
  const partner = config.snaptradeClientId && config.snaptradeConsumerKey
    ? { clientId: config.snaptradeClientId, consumerKey: config.snaptradeConsumerKey }
    : null;
  return { alpacaUrl: config.alpacaTradingUrl, snaptrade: partner ? { url: config.snaptradeUrl, partner } : null };
}

/** Loads the master keyring on first use and keeps it; throws (one clear line) when it cannot. The webhook wing uses it too. */
export function keyringLoader(config: BrokerConfig, log: BrokerLog): () => Promise<Keyring> {
  let loading: Promise<Keyring> | null = null;
  return () => (loading ??= (async () => {
    const r = await loadMasterKeyring({
      env: { LEDGER_MASTER_KEY: config.masterKey ?? undefined, LEDGER_MASTER_KEY_FILE: config.masterKeyFile ?? undefined },
      dataDir: config.dataDir,
    });
    if (!r.ok) {
      loading = null;
      throw new Error(r.error.message);
    }
    const source = r.value.source;
    if (source.kind === 'generated') {
      log('warn', `generated the master key at ${source.path}, which seals broker credentials and webhook secrets: back it up (without it, they cannot be opened), or set LEDGER_MASTER_KEY / LEDGER_MASTER_KEY_FILE`);
    } else if (source.kind === 'file' && source.looseMode) {
      log('warn', `the master key file ${source.path} is readable by others: chmod 600 it`);
    }
    return r.value.ring;
  })());
}

export function brokerConnections(input: { store: LedgerStore; config: BrokerConfig; siteUrl: string; clock: Clock; log: BrokerLog }): BrokerConnections {
  return new BrokerConnections({
    store: input.store,
    brokers: brokerStoreOf(input.store),
    clock: input.clock,
    keyring: keyringLoader(input.config, input.log),
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
