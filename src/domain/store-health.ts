// The store's health as every layer speaks of it: the error that says the database cannot answer
// now (the HTTP edge answers it 503 with Retry-After, the record path and the replica reads act on
// it) and the counters the metrics read of the store. The store's adapters produce both
// (store/port.ts); nothing above the store needs the store itself to know them.

/**
 * The database cannot answer now: unreachable, silent past a timeout, or a lock held too long by
 * another node. Nothing was written by the failed operation; the caller may retry later.
 */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}

/** A PostgreSQL pool's connections, or a SQLite WAL's size and fsyncs; what does not apply is absent. */
export type StoreGauges = {
  pool?: { total: number; idle: number; waiting: number };
  /** The public reads' own pool (PostgreSQL; store/read-scope.ts). */
  readPool?: { total: number; idle: number; waiting: number };
  wal?: { bytes: number; fsyncs: number; fsyncSeconds: number; checkpoints: number; truncates: number };
};

/** What the metrics ask of a store at each scrape (api/metrics.ts). */
export type StoreHealth = {
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  gauges(): StoreGauges;
};
