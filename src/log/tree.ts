// The stored tree, read through its tiles: which tiles hold the complete subtrees a proof or a
// right edge needs, fetched in one store call, and a HashReader over them for the core's proof
// functions. Full tiles never change, so they are kept in a small cache.
import { HASH_SIZE, type Hash, type HashReader, type NodeId } from '../core/merkle.ts';
import { nodeHashFromTile, nodeInTile, TILE_WIDTH } from '../core/tiles.ts';
import type { LogReader, StoredTile } from '../store/log-port.ts';

const FULL_TILE_BYTES = TILE_WIDTH * HASH_SIZE;
const CACHE_LIMIT = 4096; // full tiles, 8 KiB each: at most 32 MiB

export const tileKey = (t: { level: number; index: number }) => `${t.level}/${t.index}`;

export function splitHashes(bytes: Uint8Array): Hash[] {
  const out: Hash[] = [];
  for (let o = 0; o + HASH_SIZE <= bytes.length; o += HASH_SIZE) out.push(bytes.subarray(o, o + HASH_SIZE));
  return out;
}

export class TileReader {
  private readonly full = new Map<string, Hash[]>();

  constructor(private readonly store: Pick<LogReader, 'tiles'>) {}

  /** The stored hashes of each tile among `ids` (absent tiles are left out). */
  async tiles(ids: { level: number; index: number }[]): Promise<Map<string, Hash[]>> {
    const out = new Map<string, Hash[]>();
    const missing: { level: number; index: number }[] = [];
    const seen = new Set<string>();
    for (const id of ids) {
      const key = tileKey(id);
      if (seen.has(key)) continue;
      seen.add(key);
      const cached = this.full.get(key);
      if (cached) out.set(key, cached);
      else missing.push(id);
    }
    for (const t of missing.length > 0 ? await this.store.tiles(missing) : []) out.set(tileKey(t), this.remember(t));
    return out;
  }

  private remember(t: StoredTile): Hash[] {
    const hashes = splitHashes(t.hashes);
    if (t.hashes.length === FULL_TILE_BYTES) {
      if (this.full.size >= CACHE_LIMIT) this.full.delete(this.full.keys().next().value!);
      this.full.set(tileKey(t), hashes);
    }
    return hashes;
  }

  /** A HashReader for the complete subtrees `nodes` (what a proof plan or a right edge reads). */
  async readerFor(nodes: NodeId[]): Promise<HashReader> {
    const tiles = await this.tiles(nodes.map((n) => nodeInTile(n).tile));
    return (node) => {
      const hashes = tiles.get(tileKey(nodeInTile(node).tile));
      return hashes ? nodeHashFromTile(node, hashes) : undefined;
    };
  }
}
