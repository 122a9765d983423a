// The stored tree, read through its tiles: which tiles hold the complete subtrees a proof or a
// right edge needs, fetched in one store call, and a HashReader over them for the core's proof
// functions. A tile only ever grows (a partial tile is rewritten wider, its first hashes never
// change), so every hash read from one, and every complete subtree hash inside it, stays true
// for good. They are kept in a cache, the right edge's partial tiles too, each complete subtree
// hashed once: a proof then reads its siblings instead of rehashing up to 128 hashes a tile on
// every request, and touches the store only for tiles the cache does not cover.
import { HASH_SIZE, nodeHash, type Hash, type HashReader, type NodeId } from '../core/merkle.ts';
import { nodeInTile, TILE_HEIGHT, TILE_WIDTH } from '../core/tiles.ts';
import type { LogReader, StoredTile } from './port.ts';

/** Tiles kept, 16 KiB each (hashes and subtrees): at most 64 MiB, every tile of a 1,000,000-leaf tree. */
export const TILE_CACHE_LIMIT = 4096;

export const tileKey = (t: { level: number; index: number }) => `${t.level}/${t.index}`;

export function splitHashes(bytes: Uint8Array): Hash[] {
  const out: Hash[] = [];
  for (let o = 0; o + HASH_SIZE <= bytes.length; o += HASH_SIZE) out.push(bytes.subarray(o, o + HASH_SIZE));
  return out;
}

/** Where height h's subtree hashes start in a tile's buffer: 256 leaves' hashes, then 128 pairs', ... */
const heightOffset = (height: number) => 2 * TILE_WIDTH - (2 * TILE_WIDTH) / 2 ** height;
const TILE_NODES = heightOffset(TILE_HEIGHT);

/**
 * One tile as far as it is known: its first `width` hashes and, above them, every complete
 * subtree hash inside the tile up to `hashedTo` leaves, in one buffer (height by height).
 */
class KnownTile {
  width = 0;
  private hashedTo = 0;
  private readonly buffer = new Uint8Array(TILE_NODES * HASH_SIZE);

  /** Takes the stored hashes when they are more than known (the first ones are the same). */
  grow(hashes: Uint8Array): void {
    const width = Math.min(TILE_WIDTH, Math.floor(hashes.length / HASH_SIZE));
    if (width <= this.width) return;
    this.buffer.set(hashes.subarray(this.width * HASH_SIZE, width * HASH_SIZE), this.width * HASH_SIZE);
    this.width = width;
  }

  hashes(width = this.width): Hash[] {
    return splitHashes(this.buffer.subarray(0, Math.min(width, this.width) * HASH_SIZE));
  }

  /** The hash of the complete subtree of 2^height hashes at position `index` of that height; undefined past the width. */
  subtree(height: number, index: number): Hash | undefined {
    if ((index + 1) * 2 ** height > this.width) return undefined;
    if (height > 0 && this.hashedTo < this.width) this.hashUp();
    return this.at(height, index);
  }

  private at(height: number, index: number): Hash {
    const o = (heightOffset(height) + index) * HASH_SIZE;
    return this.buffer.subarray(o, o + HASH_SIZE);
  }

  /** Hashes the complete subtrees the hashes from hashedTo to width made complete. */
  private hashUp(): void {
    for (let height = 1; height < TILE_HEIGHT; height++) {
      const size = 2 ** height;
      for (let i = Math.floor(this.hashedTo / size); (i + 1) * size <= this.width; i++) {
        this.buffer.set(nodeHash(this.at(height - 1, 2 * i), this.at(height - 1, 2 * i + 1)), (heightOffset(height) + i) * HASH_SIZE);
      }
    }
    this.hashedTo = this.width;
  }
}

type TileId = { level: number; index: number };

export class TileReader {
  private readonly known = new Map<string, KnownTile>();

  constructor(private readonly store: Pick<LogReader, 'tiles'>, private readonly limit = TILE_CACHE_LIMIT) {}

  /**
   * The hashes of each tile among `ids`, at least `width` of them where given (from the cache
   * when it holds that many), else as many as are stored now. Absent tiles are left out.
   */
  async tiles(ids: (TileId & { width?: number })[]): Promise<Map<string, Hash[]>> {
    const held = new Map<string, KnownTile>();
    const missing = new Map<string, TileId>();
    for (const id of ids) {
      const key = tileKey(id);
      const known = this.cached(key);
      if (known && known.width >= (id.width ?? TILE_WIDTH)) held.set(key, known);
      else missing.set(key, id);
    }
    for (const [key, tile] of await this.fetch([...missing.values()])) held.set(key, tile);
    const out = new Map<string, Hash[]>();
    for (const id of ids) {
      const tile = held.get(tileKey(id));
      if (tile) out.set(tileKey(id), tile.hashes(id.width));
    }
    return out;
  }

  /** A HashReader for the complete subtrees `nodes` (what a proof plan or a right edge reads). */
  async readerFor(nodes: NodeId[]): Promise<HashReader> {
    const held = new Map<string, KnownTile>(); // held here, so the cache evicting them meanwhile does not matter
    const missing = new Map<string, TileId>();
    for (const node of nodes) {
      const { tile, start, count } = nodeInTile(node);
      const key = tileKey(tile);
      const known = this.cached(key);
      if (known?.subtree(Math.log2(count), start / count) !== undefined) held.set(key, known);
      else missing.set(key, tile);
    }
    for (const [key, tile] of await this.fetch([...missing.values()])) held.set(key, tile);
    return (node) => {
      const { tile, start, count } = nodeInTile(node);
      return held.get(tileKey(tile))?.subtree(Math.log2(count), start / count);
    };
  }

  /** A known tile, moved to the back of the eviction order. */
  private cached(key: string): KnownTile | undefined {
    const tile = this.known.get(key);
    if (tile) {
      this.known.delete(key);
      this.known.set(key, tile);
    }
    return tile;
  }

  /** Reads `ids` from the store into the cache; the tiles read, by key. */
  private async fetch(ids: TileId[]): Promise<Map<string, KnownTile>> {
    const out = new Map<string, KnownTile>();
    if (ids.length === 0) return out;
    for (const t of await this.store.tiles(ids)) out.set(tileKey(t), this.remember(t));
    return out;
  }

  private remember(t: StoredTile): KnownTile {
    const key = tileKey(t);
    let tile = this.known.get(key);
    if (!tile) {
      if (this.known.size >= this.limit) this.known.delete(this.known.keys().next().value!);
      this.known.set(key, (tile = new KnownTile()));
    }
    tile.grow(t.hashes);
    return tile;
  }
}
