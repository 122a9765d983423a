// The broker wing composed from the configuration: the broker endpoints, the connections use case
// (sealing and opening credentials with the vault's master keyring, vault/service.ts), and the
// periodic sync worker the server starts.
import type { BrokerConfig } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { LedgerStore } from '../store/port.ts';
import { BrokerConnections } from './connections.ts';
import type { BrokerEndpoints, BrokerLog } from './sync.ts';
import type { Keyring } from '../vault/vault.ts';

export function brokerEndpoints(config: BrokerConfig): BrokerEndpoints {
  const partner = config.snaptradeClientId && config.snaptradeConsumerKey
    ? { clientId: config.snaptradeClientId, consumerKey: config.snaptradeConsumerKey }
    : null;
  return { alpacaUrl: config.alpacaTradingUrl, snaptrade: partner ? { url: config.snaptradeUrl, partner } : null };
}

export function brokerConnections(input: { store: LedgerStore; config: BrokerConfig; siteUrl: string; clock: Clock; log: BrokerLog; keyring: () => Promise<Keyring> }): BrokerConnections {
  return new BrokerConnections({
    store: input.store,
    brokers: input.store.brokers,
    clock: input.clock,
    keyring: input.keyring,
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
