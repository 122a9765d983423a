// The stored tree, read through its tiles: which tiles hold the complete subtrees a proof or a
// right edge needs, fetched in one store call, and a HashReader over them for the core's proof
// functions. Full tiles never change, so they are kept in a small cache together with every
// complete subtree hash inside them, computed once: a proof then reads each sibling instead of
// rehashing up to 128 leaves of a tile for it on every request.
import { HASH_SIZE, nodeHash, type Hash, type HashReader, type NodeId } from '../core/merkle.ts';
import { nodeHashFromTile, nodeInTile, TILE_WIDTH } from '../core/tiles.ts';
import type { LogReader, StoredTile } from '../store/log-port.ts';

const FULL_TILE_BYTES = TILE_WIDTH * HASH_SIZE;
const CACHE_LIMIT = 2048; // full tiles with their subtrees, 16 KiB each: at most 32 MiB

export const tileKey = (t: { level: number; index: number }) => `${t.level}/${t.index}`;

export function splitHashes(bytes: Uint8Array): Hash[] {
  const out: Hash[] = [];
  for (let o = 0; o + HASH_SIZE <= bytes.length; o += HASH_SIZE) out.push(bytes.subarray(o, o + HASH_SIZE));
  return out;
}

/** A full tile's hashes and, by height inside the tile, every complete subtree hash above them. */
type FullTile = { hashes: Hash[]; byHeight: Hash[][] };

function subtreesOf(hashes: Hash[]): Hash[][] {
  const byHeight = [hashes];
  for (let level = hashes; level.length > 1;) {
    const up: Hash[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(nodeHash(level[i]!, level[i + 1]!));
    byHeight.push(up);
    level = up;
  }
  return byHeight;
}

export class TileReader {
  private readonly full = new Map<string, FullTile>();

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
      if (cached) out.set(key, cached.hashes);
      else missing.push(id);
    }
    for (const t of missing.length > 0 ? await this.store.tiles(missing) : []) out.set(tileKey(t), this.remember(t));
    return out;
  }

  private remember(t: StoredTile): Hash[] {
    const hashes = splitHashes(t.hashes);
    if (t.hashes.length === FULL_TILE_BYTES) {
      if (this.full.size >= CACHE_LIMIT) this.full.delete(this.full.keys().next().value!);
      this.full.set(tileKey(t), { hashes, byHeight: subtreesOf(hashes) });
    }
    return hashes;
  }

  /** A HashReader for the complete subtrees `nodes` (what a proof plan or a right edge reads). */
  async readerFor(nodes: NodeId[]): Promise<HashReader> {
    const tiles = await this.tiles(nodes.map((n) => nodeInTile(n).tile));
    return (node) => {
      const { tile, start, count } = nodeInTile(node);
      const key = tileKey(tile);
      const full = this.full.get(key);
      if (full) return full.byHeight[Math.log2(count)]![start / count];
      const hashes = tiles.get(key);
      return hashes ? nodeHashFromTile(node, hashes) : undefined;
    };
  }
}
