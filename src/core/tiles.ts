// C2SP tlog-tiles arithmetic for log_v1 §3: tile paths, which tiles a tree size has, where a
// stored node lives in a tile, and the tile and entry-bundle byte formats.
// It owns the exact text of `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]` (strict both
// ways) and the bytes behind them. No I/O; a store or HTTP layer maps these to rows and responses.

import {
  HASH_SIZE,
  isCount,
  treeHead,
  type Hash,
  type LogResult,
  type NodeId,
} from './merkle.ts';

/** Tree levels per tile: a tile is a subtree of height 8. */
export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
export const MAX_TILE_LEVEL = 63;
/** Entry bundles prefix each entry with a big-endian uint16 length. */
export const MAX_ENTRY_SIZE = 0xffff;

/**
 * A hash tile (level 0..63) or an entry bundle ('entries'), with its width: 256 for a full tile,
 * 1..255 for a partial one.
 */
export type Tile = { level: number | 'entries'; index: number; width: number };

function ok<T>(value: T): LogResult<T> {
  return { ok: true, value };
}

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

function isWidth(w: number): boolean {
  return Number.isInteger(w) && w >= 1 && w <= TILE_WIDTH;
}

function isTileLevel(level: unknown): boolean {
  return level === 'entries' || (Number.isInteger(level) && (level as number) >= 0 && (level as number) <= MAX_TILE_LEVEL);
}

/** N as zero-padded 3-digit path elements, all but the last prefixed with x: 1234067 -> x001/x234/067. */
export function tileIndexPath(index: number): string {
  const groups: string[] = [];
  let n = index;
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** The path of a tile below the log prefix, e.g. `tile/0/x001/234.p/5` or `tile/entries/000`. */
export function tilePath(tile: Tile): LogResult<string> {
  if (!isTileLevel(tile.level)) return fail('tile level must be 0..63 or entries');
  if (!isCount(tile.index)) return fail('tile index must be a non-negative safe integer');
  if (!isWidth(tile.width)) return fail('tile width must be 1..256');
  const partial = tile.width < TILE_WIDTH ? `.p/${tile.width}` : '';
  return ok(`tile/${tile.level}/${tileIndexPath(tile.index)}${partial}`);
}

const LEVEL = /^(?:entries|0|[1-9][0-9]?)$/;
const WIDTH = /^[1-9][0-9]{0,2}$/;

/** Parses a tile path below the log prefix; rejects every spelling tilePath would not produce. */
export function parseTilePath(path: string): LogResult<Tile> {
  if (typeof path !== 'string') return fail('path must be a string');
  const parts = path.split('/');
  if (parts[0] !== 'tile' || parts.length < 3) return fail('not a tile path');
  const levelText = parts[1]!;
  if (!LEVEL.test(levelText)) return fail('malformed tile level');
  const level = levelText === 'entries' ? 'entries' : Number(levelText);
  if (!isTileLevel(level)) return fail('tile level must be 0..63');

  let segments = parts.slice(2);
  let width = TILE_WIDTH;
  const last = segments[segments.length - 1]!;
  if (segments.length >= 2 && segments[segments.length - 2]!.endsWith('.p')) {
    if (!WIDTH.test(last) || Number(last) > 255) return fail('partial width must be 1..255');
    width = Number(last);
    segments = segments.slice(0, -1);
    segments[segments.length - 1] = segments[segments.length - 1]!.slice(0, -2);
  }
  const index = parseTileIndex(segments);
  if (!index.ok) return index;
  return ok({ level, index: index.value, width });
}

function parseTileIndex(segments: string[]): LogResult<number> {
  let index = 0;
  for (let i = 0; i < segments.length; i++) {
    const inner = i < segments.length - 1;
    const m = (inner ? /^x([0-9]{3})$/ : /^([0-9]{3})$/).exec(segments[i]!);
    if (!m) return fail('malformed tile index');
    if (i === 0 && inner && m[1] === '000') return fail('tile index has a leading zero group');
    index = index * 1000 + Number(m[1]);
  }
  if (!Number.isSafeInteger(index)) return fail('tile index is too large');
  return ok(index);
}

/** Per level, the full tiles and the width of the partial tile (0: none) of a tree of `size`. */
export function tileLevels(size: number): { level: number; fullTiles: number; partialWidth: number }[] {
  const levels: { level: number; fullTiles: number; partialWidth: number }[] = [];
  let count = size; // hashes at this tile level
  for (let level = 0; count > 0; level++) {
    levels.push({ level, fullTiles: Math.floor(count / TILE_WIDTH), partialWidth: count % TILE_WIDTH });
    count = Math.floor(count / TILE_WIDTH);
  }
  return levels;
}

/** Every hash tile and entry bundle a tree of `size` leaves is served as (full and partial). */
export function tilesForSize(size: number): Tile[] {
  return tilesChanged(0, size);
}

/**
 * The hash tiles and entry bundles whose content differs between the trees of oldSize and newSize
 * leaves (new full tiles, and the new partial tiles): what to write after growing the tree.
 */
export function tilesChanged(oldSize: number, newSize: number): Tile[] {
  const tiles: Tile[] = [];
  if (!isCount(oldSize) || !isCount(newSize) || newSize <= oldSize) return tiles;
  const hashTiles: Tile[] = [];
  let from = oldSize;
  let to = newSize;
  for (let level = 0; to > from; level++) {
    for (let index = Math.floor(from / TILE_WIDTH); index * TILE_WIDTH < to; index++) {
      hashTiles.push({ level, index, width: Math.min(TILE_WIDTH, to - index * TILE_WIDTH) });
    }
    from = Math.floor(from / TILE_WIDTH);
    to = Math.floor(to / TILE_WIDTH);
  }
  for (const t of hashTiles) if (t.level === 0) tiles.push({ level: 'entries', index: t.index, width: t.width });
  return [...hashTiles, ...tiles];
}

/**
 * Where a complete subtree's hash comes from in tile form: the MTH of `count` consecutive hashes
 * from `start` in hash tile (level, index). count is 1 for nodes at a tile level (a multiple of 8).
 */
export function nodeInTile(node: NodeId): { tile: { level: number; index: number }; start: number; count: number } {
  const tileLevel = Math.floor(node.level / TILE_HEIGHT);
  const count = 2 ** (node.level - tileLevel * TILE_HEIGHT);
  const first = node.index * count; // index of the node's first hash at the tile level
  return {
    tile: { level: tileLevel, index: Math.floor(first / TILE_WIDTH) },
    start: first % TILE_WIDTH,
    count,
  };
}

/** A node's hash from the hashes of the tile nodeInTile named; undefined if the tile is too narrow. */
export function nodeHashFromTile(node: NodeId, tileHashes: readonly Hash[]): Hash | undefined {
  const { start, count } = nodeInTile(node);
  if (tileHashes.length < start + count) return undefined;
  return treeHead(tileHashes.slice(start, start + count));
}

export function encodeTile(hashes: readonly Hash[]): LogResult<Uint8Array> {
  if (hashes.length < 1 || hashes.length > TILE_WIDTH) return fail('a tile holds 1..256 hashes');
  const out = new Uint8Array(hashes.length * HASH_SIZE);
  for (let i = 0; i < hashes.length; i++) {
    if (hashes[i]!.length !== HASH_SIZE) return fail('a tile hash is not 32 bytes');
    out.set(hashes[i]!, i * HASH_SIZE);
  }
  return ok(out);
}

/** Parses tile bytes of the given width (256 for a full tile). */
export function parseTile(bytes: Uint8Array, width: number): LogResult<Hash[]> {
  if (!isWidth(width)) return fail('tile width must be 1..256');
  if (bytes.length !== width * HASH_SIZE) return fail(`a tile of width ${width} is ${width * HASH_SIZE} bytes, got ${bytes.length}`);
  const hashes: Hash[] = [];
  for (let i = 0; i < width; i++) hashes.push(bytes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE));
  return ok(hashes);
}

/** Entry bundle: each leaf's data as a big-endian uint16 length, then the bytes. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): LogResult<Uint8Array> {
  if (entries.length < 1 || entries.length > TILE_WIDTH) return fail('an entry bundle holds 1..256 entries');
  let total = 0;
  for (const e of entries) {
    if (e.length > MAX_ENTRY_SIZE) return fail(`an entry of ${e.length} bytes is over ${MAX_ENTRY_SIZE}`);
    total += 2 + e.length;
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const e of entries) {
    out[o] = e.length >> 8;
    out[o + 1] = e.length & 0xff;
    out.set(e, o + 2);
    o += 2 + e.length;
  }
  return ok(out);
}

/** Parses an entry bundle of exactly `width` entries, every byte accounted for. */
export function parseEntryBundle(bytes: Uint8Array, width: number): LogResult<Uint8Array[]> {
  if (!isWidth(width)) return fail('bundle width must be 1..256');
  const entries: Uint8Array[] = [];
  let o = 0;
  while (o < bytes.length) {
    if (entries.length === width) return fail(`bytes after the ${width} entries`);
    if (o + 2 > bytes.length) return fail('truncated entry length');
    const length = (bytes[o]! << 8) | bytes[o + 1]!;
    if (o + 2 + length > bytes.length) return fail('truncated entry');
    entries.push(bytes.slice(o + 2, o + 2 + length));
    o += 2 + length;
  }
  if (entries.length !== width) return fail(`bundle has ${entries.length} entries, expected ${width}`);
  return ok(entries);
}
