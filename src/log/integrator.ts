// The global log's integrator (log_v1 §1-2): the one process at a time that appends newly
// committed records to the log. It reads them in commit order (sort key; appends commit in that
// order: one writer on SQLite, the per-schema append lock on PostgreSQL), so each agent's chain
// order is kept; assigns log indexes; grows the tree from its right edge (never rehashing it);
// and writes the leaves, the grown tiles and a signed checkpoint in ONE transaction. A crash at
// any point leaves the last committed checkpoint and its tiles, which the next holder resumes
// from, so no checkpoint is ever signed that is not an extension of the one before.
// Batches close at 256 records or 250 ms after the first waiting record was seen. It runs beside
// the record path, never on it: a 201 never waits for it.
import { appendLeaves, compactRangeRoot, hashesEqual, leafHash, readCompactRange, rootNodes, type CompactRange, type Hash, type StoredNode } from '../core/merkle.ts';
import { openCheckpoint, parseVkey, signCheckpoint } from '../core/note.ts';
import { verifyRaw } from '../core/ed25519.ts';
import { MAX_ENTRY_SIZE, TILE_HEIGHT, TILE_WIDTH } from '../core/tiles.ts';
import type { StoredRecord } from '../domain/types.ts';
import { entryText, sortKeyOf } from '../core/chain.ts';
import { LogMovedOn, type IntegratorSession, type LogBatch, type LogStore, type StoredTile } from './port.ts';
import { SingletonJob } from '../runtime/job-loop.ts';
import type { LogKey } from './key.ts';
import { TileReader, tileKey } from './tree.ts';

export type IntegratorOptions = {
  log: LogStore;
  key: LogKey;
  now?: () => Date;
  onError?: (message: string) => void;
  /** Told of a race lost to another integrator (LogMovedOn): no fault, the next turn resumes from the stored log. */
  onNotice?: (message: string) => void;
  onTakeOver?: (treeSize: number) => void;
  /** Told after each batch's checkpoint is committed (the witnessing job wakes on it). */
  onCheckpoint?: (treeSize: number) => void;
  batchSize?: number;
  batchWindowMs?: number;
  pollMs?: number;
  /** Wait before trying again for the hold, or after an error. */
  retryMs?: number;
};

export const BATCH_SIZE = 256;
export const BATCH_WINDOW_MS = 250;

const encoder = new TextEncoder();

/** canon_v1(chain entry): the leaf data of a record (log_v1 §1). */
export function leafData(record: StoredRecord): Uint8Array {
  return encoder.encode(entryText(record));
}

type TileGrowth = { level: number; index: number; first: number; hashes: Hash[] };

/** The new tile-level hashes among the nodes a batch created, grouped by hash tile. */
function tileGrowth(nodes: StoredNode[]): TileGrowth[] {
  const byTile = new Map<string, TileGrowth>();
  for (const n of nodes) {
    if (n.level % TILE_HEIGHT !== 0) continue;
    const level = n.level / TILE_HEIGHT;
    const index = Math.floor(n.index / TILE_WIDTH);
    const key = tileKey({ level, index });
    let g = byTile.get(key);
    if (!g) byTile.set(key, (g = { level, index, first: n.index % TILE_WIDTH, hashes: [] }));
    g.hashes.push(n.hash);
  }
  return [...byTile.values()];
}

function concat(hashes: readonly Hash[]): Uint8Array {
  const out = new Uint8Array(hashes.length * 32);
  hashes.forEach((h, i) => out.set(h, i * 32));
  return out;
}

/** Where the integrator stands while it holds the log. */
type Held = { session: IntegratorSession; range: CompactRange; cursor: string | null; release(): Promise<void> };

export class Integrator {
  private readonly tiles: TileReader;
  private readonly job: SingletonJob<Held>;
  private firstSeen: number | null = null;
  private readonly batchSize: number;
  private readonly windowMs: number;
  private readonly pollMs: number;

  constructor(private readonly options: IntegratorOptions) {
    this.tiles = new TileReader(options.log);
    this.batchSize = options.batchSize ?? BATCH_SIZE;
    this.windowMs = options.batchWindowMs ?? BATCH_WINDOW_MS;
    this.pollMs = options.pollMs ?? 25;
    const retryMs = options.retryMs ?? 1000;
    this.job = new SingletonJob({
      take: () => this.takeHold(),
      turn: (held) => this.step(held),
      standbyMs: retryMs,
      failed: (err) => {
        if (err instanceof LogMovedOn) this.options.onNotice?.(`log integrator: ${err.message}; resuming from the stored log`);
        else this.options.onError?.(`log integrator: ${err.message}`);
        return retryMs;
      },
    });
  }

  /** Whether this process holds the log now. */
  get holding(): boolean {
    return this.job.held !== null;
  }

  start(): void {
    this.job.start();
  }

  /** Stops after the batch in flight (if any) and gives up the hold. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /** One turn of the loop: returns how long to wait before the next. */
  private async step(held: Held): Promise<number> {
    const waiting = await held.session.countPending(held.cursor, this.batchSize);
    const now = Date.now();
    if (waiting === 0) {
      this.firstSeen = null;
      return this.pollMs;
    }
    this.firstSeen ??= now;
    const age = now - this.firstSeen;
    if (waiting < this.batchSize && age < this.windowMs) return Math.min(this.pollMs, this.windowMs - age);
    await this.integrateBatch(held);
    this.firstSeen = null;
    return 0;
  }

  /** Integrates everything waiting now, whatever the batch window (tests and shutdown). */
  async integratePending(): Promise<number> {
    const held = await this.job.hold();
    if (!held) return 0;
    let total = 0;
    for (let n = await this.integrateBatch(held); n > 0; n = await this.integrateBatch(held)) total += n;
    return total;
  }

  /** Takes the hold and loads the right edge of the stored tree, checked against its checkpoint. */
  private async takeHold(): Promise<Held | null> {
    const session = await this.options.log.tryIntegrator();
    if (!session) return null;
    try {
      const latest = await this.options.log.latestCheckpoint();
      const size = latest?.treeSize ?? 0;
      if (latest && latest.vkey !== this.options.key.vkey) {
        throw new Error(`the log's latest checkpoint is signed by ${latest.vkey}, not by this node's key ${this.options.key.vkey}: give every node the same LEDGER_LOG_KEY_FILE and LEDGER_LOG_ORIGIN`);
      }
      const reader = await this.tiles.readerFor(rootNodes(size));
      const range = readCompactRange(size, reader);
      if (!range.ok) throw new Error(`cannot read the stored tree of size ${size}: ${range.error}`);
      if (latest) this.checkRoot(latest.note, range.value);
      const cursor = await session.lastSortKey();
      this.options.onTakeOver?.(size);
      return { session, range: range.value, cursor, release: () => session.release() };
    } catch (err) {
      await session.release();
      throw err;
    }
  }

  private checkRoot(note: string, range: CompactRange): void {
    const vkey = parseVkey(this.options.key.vkey);
    if (!vkey.ok) throw new Error(vkey.error);
    const opened = openCheckpoint(note, vkey.value, verifyRaw);
    if (!opened.ok) throw new Error(`the latest stored checkpoint does not open: ${opened.error}`);
    if (opened.value.checkpoint.size !== range.size || !hashesEqual(opened.value.checkpoint.root, compactRangeRoot(range))) {
      throw new Error(`the stored tiles do not give the latest checkpoint's root (size ${range.size})`);
    }
  }

  /** One batch: up to batchSize waiting records, integrated in one transaction. Returns how many. */
  private async integrateBatch(held: Held): Promise<number> {
    const records = await held.session.pending(held.cursor, this.batchSize);
    if (records.length === 0) return 0;
    const { batch, range } = await this.planBatch(held.range, records);
    await held.session.integrate(held.range.size, batch);
    held.range = range;
    held.cursor = batch.leaves[batch.leaves.length - 1]!.sortKey;
    this.options.onCheckpoint?.(range.size);
    return records.length;
  }

  private async planBatch(range: CompactRange, records: StoredRecord[]): Promise<{ batch: LogBatch; range: CompactRange }> {
    const leaves = records.map(leafData);
    const tooLong = leaves.findIndex((l) => l.length > MAX_ENTRY_SIZE);
    if (tooLong >= 0) throw new Error(`record ${records[tooLong]!.id}'s chain entry is over ${MAX_ENTRY_SIZE} bytes`);
    const grown = appendLeaves(range, leaves.map(leafHash));
    if (!grown.ok) throw new Error(grown.error);
    const growth = tileGrowth(grown.value.nodes);
    const stored = await this.tiles.tiles(growth.filter((g) => g.first > 0));
    const tiles: StoredTile[] = growth.map((g) => {
      const before = g.first > 0 ? (stored.get(tileKey(g)) ?? []).slice(0, g.first) : [];
      if (before.length !== g.first) throw new Error(`tile ${tileKey(g)} holds ${before.length} hashes, expected ${g.first}`);
      return { level: g.level, index: g.index, hashes: concat([...before, ...g.hashes]) };
    });
    const next = grown.value.range;
    const { key } = this.options;
    const note = signCheckpoint({ origin: key.origin, size: next.size, root: compactRangeRoot(next) }, key.publicKey, key.sign);
    if (!note.ok) throw new Error(`cannot sign the checkpoint: ${note.error}`);
    return {
      range: next,
      batch: {
        leaves: records.map((r, i) => ({ logIndex: range.size + i, recordId: r.id, sortKey: sortKeyOf(r.id) })),
        tiles,
        checkpoint: {
          treeSize: next.size,
          root: compactRangeRoot(next),
          note: note.value,
          vkey: key.vkey,
          createdAt: (this.options.now?.() ?? new Date()).toISOString(),
        },
      },
    };
  }
}
