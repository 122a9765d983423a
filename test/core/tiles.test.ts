// src/core/tiles.ts: tlog-tiles paths (C2SP and reference-note examples, strict parsing), the
// tiles of a tree size, nodes read back from tiles, and the tile / entry-bundle bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  encodeEntryBundle,
  encodeTile,
  leafHash,
  MemoryTree,
  nodeHashFromTile,
  nodeInTile,
  parseEntryBundle,
  parseTile,
  parseTilePath,
  tileIndexPath,
  tileLevels,
  tilePath,
  tilesChanged,
  tilesForSize,
  treeHead,
  type Hash,
  type LogResult,
  type Tile,
} from '../../src/core/index.ts';
import { loadMerkleVectors } from './log-helpers.ts';

type C2sp = {
  tiles_examples: {
    index_path: { index: number; path: string };
    size_70000: Record<string, number>;
    size_256: Record<string, number>;
  };
};
type Constructed = { tiles: { size_1000_tiles: string[] } };

function value<T>(r: LogResult<T>): T {
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

function paths(tiles: Tile[]): string[] {
  return tiles.map((t) => value(tilePath(t)));
}

describe('tile paths', () => {
  const c2sp = loadMerkleVectors<C2sp>('c2sp-notes.json').tiles_examples;

  it('encodes N as x-prefixed 3-digit groups (tlog-tiles example)', () => {
    assert.equal(tileIndexPath(c2sp.index_path.index), c2sp.index_path.path);
    assert.equal(tileIndexPath(0), '000');
    assert.equal(tileIndexPath(999), '999');
    assert.equal(tileIndexPath(1000), 'x001/000');
    assert.equal(tileIndexPath(1000000), 'x001/x000/000');
  });

  it('writes full, partial and entry tiles', () => {
    assert.equal(value(tilePath({ level: 0, index: 1234067, width: 256 })), 'tile/0/x001/x234/067');
    assert.equal(value(tilePath({ level: 2, index: 5, width: 17 })), 'tile/2/005.p/17');
    assert.equal(value(tilePath({ level: 'entries', index: 3, width: 232 })), 'tile/entries/003.p/232');
    for (const bad of [
      { level: 64, index: 0, width: 256 },
      { level: -1, index: 0, width: 256 },
      { level: 0, index: -1, width: 256 },
      { level: 0, index: 0, width: 0 },
      { level: 0, index: 0, width: 257 },
      { level: 0, index: 1.5, width: 1 },
    ]) assert.equal(tilePath(bad).ok, false, JSON.stringify(bad));
  });

  it('parses what it writes', () => {
    assert.deepEqual(value(parseTilePath('tile/0/x001/x234/067')), { level: 0, index: 1234067, width: 256 });
    assert.deepEqual(value(parseTilePath('tile/63/000.p/1')), { level: 63, index: 0, width: 1 });
    assert.deepEqual(value(parseTilePath('tile/entries/x001/000.p/255')), { level: 'entries', index: 1000, width: 255 });
  });

  it('rejects every other spelling', () => {
    for (const bad of [
      '', 'tile', 'tile/', 'tile/0', 'tile/0/', '/tile/0/000', 'tile/0/000/', 'tiles/0/000', 'tile//000',
      'tile/00/000', 'tile/01/000', 'tile/64/000', 'tile/-1/000', 'tile/+1/000', 'tile/1e1/000', 'tile/entry/000', 'tile/Entries/000',
      'tile/0/1', 'tile/0/01', 'tile/0/0001', 'tile/0/x000/001', 'tile/0/x001', 'tile/0/001/002', 'tile/0/x1/000', 'tile/0/X001/000',
      'tile/0/000.p', 'tile/0/000.p/', 'tile/0/000.p/0', 'tile/0/000.p/256', 'tile/0/000.p/012', 'tile/0/000.p/1/',
      'tile/0/000.p/1/2', 'tile/0/x001.p/2/003', 'tile/0/.p/5', 'tile/0/000.P/5', 'tile/0/000.q/5', 'tile/0/000.p/+5',
      'tile/0/ 000', 'tile/0/000 ', 'tile/0/00a', 'tile/0/x999/x999/x999/x999/x999/x999/999',
    ]) assert.equal(parseTilePath(bad).ok, false, bad);
  });

  const tile = fc.record({
    level: fc.oneof(fc.integer({ min: 0, max: 63 }), fc.constant('entries' as const)),
    index: fc.oneof(fc.nat(2000), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
    width: fc.oneof(fc.constant(256), fc.integer({ min: 1, max: 255 })),
  });

  it('property: path -> parse gives the tile back', () => {
    fc.assert(fc.property(tile, (t) => assert.deepEqual(value(parseTilePath(value(tilePath(t)))), { ...t })));
  });

  it('property: a mutated path either fails or is the canonical path of what it parses to', () => {
    const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('replace', 'insert', 'delete'), ch: fc.constantFrom(...'0123456789x/.p e-') });
    fc.assert(
      fc.property(tile, edit, (t, e) => {
        const path = value(tilePath(t));
        const at = e.at % (path.length + 1);
        const mutated =
          e.kind === 'insert' ? path.slice(0, at) + e.ch + path.slice(at)
          : e.kind === 'delete' ? path.slice(0, at) + path.slice(at + 1)
          : path.slice(0, at) + e.ch + path.slice(at + 1);
        const parsed = parseTilePath(mutated);
        if (parsed.ok) assert.equal(value(tilePath(parsed.value)), mutated);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('tiles of a tree size', () => {
  it('size 1,000 (reference note a.8)', () => {
    const v = loadMerkleVectors<Constructed>('constructed.json');
    assert.deepEqual(paths(tilesForSize(1000)), v.tiles.size_1000_tiles);
  });

  it('size 70,000 and 256 (tlog-tiles)', () => {
    const c = loadMerkleVectors<C2sp>('c2sp-notes.json').tiles_examples;
    assert.deepEqual(tileLevels(70000), [
      { level: 0, fullTiles: c.size_70000.level0_full, partialWidth: c.size_70000.level0_partial },
      { level: 1, fullTiles: c.size_70000.level1_full, partialWidth: c.size_70000.level1_partial },
      { level: 2, fullTiles: c.size_70000.level2_full, partialWidth: c.size_70000.level2_partial },
    ]);
    assert.deepEqual(tileLevels(256), [
      { level: 0, fullTiles: c.size_256.level0_full, partialWidth: c.size_256.level0_partial },
      { level: 1, fullTiles: c.size_256.level1_full, partialWidth: c.size_256.level1_partial },
    ]);
    const tiles = tilesForSize(70000);
    const hashTiles = tiles.filter((t) => t.level !== 'entries');
    assert.equal(hashTiles.length, 273 + 1 + 1 + 1 + 1);
    assert.equal(tiles.length - hashTiles.length, 274);
    assert.deepEqual(paths(hashTiles.filter((t) => t.width < 256)), ['tile/0/273.p/112', 'tile/1/001.p/17', 'tile/2/000.p/1']);
    assert.deepEqual(tilesForSize(0), []);
  });

  it('property: growing the tree changes exactly the tiles the new size has and the old one lacks', () => {
    fc.assert(
      fc.property(fc.nat(140000), fc.nat(3000), (a, grow) => {
        const b = a + grow;
        const before = new Set(paths(tilesForSize(a)));
        const expected = paths(tilesForSize(b)).filter((p) => !before.has(p));
        assert.deepEqual(new Set(paths(tilesChanged(a, b))), new Set(expected));
        assert.equal(tilesChanged(a, b).length, expected.length);
      }),
      { numRuns: 60 },
    );
  });
});

describe('nodes in tiles', () => {
  // 2 full level-0 tiles and change: enough for level-1 hashes and partial tiles.
  const size = 256 * 256 + 3 * 256 + 77;
  const tree = new MemoryTree();
  assert.ok(tree.append(Array.from({ length: size }, (_, i) => leafHash(new Uint8Array([i >> 16, (i >> 8) & 255, i & 255])))).ok);

  /** The tile (level, index) of the tree of `size`, as a log would serve it. */
  function tileHashes(level: number, index: number): Hash[] {
    const hashes: Hash[] = [];
    for (let i = 0; i < 256; i++) {
      const h = tree.read({ level: level * 8, index: index * 256 + i });
      if (!h) break;
      hashes.push(h);
    }
    return hashes;
  }

  it('a level-1 tile hash is the MTH of the full level-0 tile below (tlog-tiles definition)', () => {
    const level1 = tileHashes(1, 0);
    assert.equal(level1.length, 256);
    for (const n of [0, 1, 255]) assert.deepEqual(level1[n], treeHead(tileHashes(0, n)));
    assert.deepEqual(tileHashes(2, 0), [treeHead(level1)]);
  });

  it('property: every stored node is recomputed from the tile nodeInTile names', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 16 }), fc.nat(), (level, pick) => {
        const count = Math.floor(size / 2 ** level);
        fc.pre(count > 0);
        const node = { level, index: pick % count };
        const where = nodeInTile(node);
        assert.ok(where.start + where.count <= 256);
        const h = nodeHashFromTile(node, tileHashes(where.tile.level, where.tile.index));
        assert.deepEqual(h, tree.read(node));
      }),
      { numRuns: 300 },
    );
  });

  it('a tile too narrow for the node gives undefined', () => {
    assert.equal(nodeHashFromTile({ level: 3, index: 1 }, tileHashes(0, 0).slice(0, 15)), undefined);
  });
});

describe('tile bytes', () => {
  const hashes = Array.from({ length: 5 }, (_, i) => leafHash(new Uint8Array([i])));

  it('round-trips and checks the width', () => {
    const bytes = value(encodeTile(hashes));
    assert.equal(bytes.length, 160);
    assert.deepEqual(value(parseTile(bytes, 5)), hashes);
    assert.equal(parseTile(bytes, 4).ok, false);
    assert.equal(parseTile(bytes, 6).ok, false);
    assert.equal(parseTile(bytes.slice(1), 5).ok, false);
    assert.equal(parseTile(new Uint8Array(0), 0).ok, false);
    assert.equal(encodeTile([]).ok, false);
    assert.equal(encodeTile([new Uint8Array(31)]).ok, false);
    assert.equal(encodeTile(Array.from({ length: 257 }, () => hashes[0]!)).ok, false);
  });
});

describe('entry bundles', () => {
  it('encodes each entry as a big-endian uint16 length then its bytes', () => {
    const bundle = value(encodeEntryBundle([new Uint8Array([0xaa]), new Uint8Array(0), new Uint8Array(300).fill(7)]));
    assert.deepEqual([...bundle.slice(0, 5)], [0x00, 0x01, 0xaa, 0x00, 0x00]);
    assert.deepEqual([...bundle.slice(5, 7)], [0x01, 0x2c]);
    assert.equal(bundle.length, 3 + 2 + 302);
  });

  it('refuses entries over 65,535 bytes and bundles of 0 or 257 entries', () => {
    assert.ok(encodeEntryBundle([new Uint8Array(65535)]).ok);
    assert.equal(encodeEntryBundle([new Uint8Array(65536)]).ok, false);
    assert.equal(encodeEntryBundle([]).ok, false);
    assert.equal(encodeEntryBundle(Array.from({ length: 257 }, () => new Uint8Array(1))).ok, false);
  });

  it('parses strictly', () => {
    const two = value(encodeEntryBundle([new Uint8Array([1, 2]), new Uint8Array([3])]));
    assert.deepEqual(value(parseEntryBundle(two, 2)), [new Uint8Array([1, 2]), new Uint8Array([3])]);
    assert.equal(parseEntryBundle(two, 1).ok, false, 'trailing entry');
    assert.equal(parseEntryBundle(two, 3).ok, false, 'missing entry');
    assert.equal(parseEntryBundle(new Uint8Array([...two, 0]), 2).ok, false, 'trailing byte');
    assert.equal(parseEntryBundle(two.slice(0, -1), 2).ok, false, 'truncated entry');
    assert.equal(parseEntryBundle(two.slice(0, 5), 2).ok, false, 'truncated length');
    assert.equal(parseEntryBundle(new Uint8Array(0), 1).ok, false);
    assert.equal(parseEntryBundle(two, 0).ok, false);
  });

  const entries = fc.array(fc.uint8Array({ maxLength: 600 }), { minLength: 1, maxLength: 40 });

  it('property: round-trips, and every entry hashes to its level-0 tile hash', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const bundle = value(encodeEntryBundle(list));
        const parsed = value(parseEntryBundle(bundle, list.length));
        assert.deepEqual(parsed, list);
        const tree = new MemoryTree();
        assert.ok(tree.appendData(parsed).ok);
        const tile = value(parseTile(value(encodeTile(list.map(leafHash))), list.length));
        tile.forEach((h, i) => assert.deepEqual(h, tree.read({ level: 0, index: i })));
      }),
      { numRuns: 100 },
    );
  });

  it('property: a truncated or extended bundle does not parse at the same width', () => {
    fc.assert(
      fc.property(entries, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), (list, cut, extra) => {
        const bundle = value(encodeEntryBundle(list));
        const at = cut % bundle.length;
        assert.equal(parseEntryBundle(bundle.slice(0, at), list.length).ok, false);
        assert.equal(parseEntryBundle(new Uint8Array([...bundle, ...extra]), list.length).ok, false);
      }),
      { numRuns: 200 },
    );
  });
});
