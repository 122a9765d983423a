// The vault's storage port: what the vault keeps to know its keyring opens what it sealed, with a
// SQLite and a PostgreSQL adapter (store/{sqlite,postgres}/vault.ts) over the same database as the
// LedgerStore, which exposes it as `vault`. Owns the master key checks (one per key version,
// append-only) and reads, for each key version, one secret sealed under it by each owner of sealed
// secrets (broker connections, SnapTrade users, webhook endpoints).

/** Who holds a sealed secret: the vault's associated data is derived from the owner and its id (vault.ts, `sealedAad`). */
export type SealedOwner = 'broker_connection' | 'broker_user' | 'webhook_endpoint';

/** One sealed secret: `id` is the connection id, the user's agent id, or the endpoint id. */
export type SealedSample = { owner: SealedOwner; id: string; keyVersion: number; sealed: string };

export interface VaultStore {
  /** The check value recorded for each key version. */
  keyChecks(): Promise<Map<number, string>>;
  /** Records a version's check value unless one is recorded already (the first writer wins; read it back). */
  addKeyCheck(version: number, checkValue: string, at: string): Promise<void>;
  /** For each key version the database holds secrets under: one secret of each owner. */
  sealedSamples(): Promise<SealedSample[]>;
}
