// The broker wing composed from the configuration: the broker endpoints, the connections use case
// (sealing and opening credentials with the vault's master keyring, vault/service.ts), and the
// periodic sync worker the composed service runs (compose.ts).
import type { BrokerConfig } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { LedgerStore } from '../store/port.ts';
import { JobLoop } from '../runtime/job-loop.ts';
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
 * `intervalS` seconds (0: never), on the job loop. The first round comes one interval after the
 * start, as each later one comes an interval after the previous ended: a restart does not sync
 * every connection at once. A connection another node is syncing is skipped this round.
 */
export class SyncWorker {
  private readonly loop: JobLoop;
  private readonly intervalMs: number;

  constructor(private readonly connections: BrokerConnections, intervalS: number, log: BrokerLog) {
    this.intervalMs = intervalS * 1000;
    this.loop = new JobLoop({
      turn: async () => {
        await this.syncAll();
        return this.intervalMs;
      },
      failed: (err) => {
        log('error', 'broker sync round failed', { error: err.message });
        return this.intervalMs;
      },
    });
  }

  start(): void {
    if (this.intervalMs > 0) this.loop.start(this.intervalMs);
  }

  private async syncAll(): Promise<void> {
    for (const c of await this.connections.listSyncable()) {
      if (this.loop.stopping) return;
      await this.connections.syncNow(c.id);
    }
  }

  /** Stops the rounds, waits for the one in flight, then for the syncs started on demand. */
  async stop(): Promise<void> {
    await this.loop.halt();
    await this.connections.drain();
  }
}
