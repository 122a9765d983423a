// The tile cache behind every proof (src/log/tree.ts), against a tree held in memory: one reader
// kept while the tree grows across tile boundaries at levels 0 and 1 gives the same proofs and
// tiles as the tree itself at every size, old and new, and touches the store only for tiles it
// does not hold (the right edge after the tree grew), with a tiny cache limit as well.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consistencyProof, hashesEqual, inclusionPlan, inclusionProof, leafHash, MemoryTree, planNodes, readProof, consistencyPlan, type Hash } from '../../src/core/merkle.ts';
import { TILE_HEIGHT, TILE_WIDTH, tileLevels } from '../../src/core/tiles.ts';
import type { StoredTile } from '../../src/log/port.ts';
import { TileReader } from '../../src/log/tree.ts';

/** A store of the tiles of `tree` at its current size, counting the tiles it is asked for. */
function tileStore(tree: MemoryTree) {
  const asked: string[] = [];
  const tile = (level: number, index: number): StoredTile | null => {
    const count = tileLevels(tree.size)[level];
    if (!count) return null;
    const width = index < count.fullTiles ? TILE_WIDTH : index === count.fullTiles ? count.partialWidth : 0;
    if (width === 0) return null;
    const bytes = new Uint8Array(width * 32);
    for (let i = 0; i < width; i++) bytes.set(tree.read({ level: level * TILE_HEIGHT, index: index * TILE_WIDTH + i })!, i * 32);
    return { level, index, hashes: bytes };
  };
  return {
    asked,
    tiles: async (ids: { level: number; index: number }[]) => {
      asked.push(...ids.map((i) => `${i.level}/${i.index}`));
      return ids.map((i) => tile(i.level, i.index)).filter((t): t is StoredTile => t !== null);
    },
  };
}

const leaves = (from: number, to: number): Hash[] => {
  const out: Hash[] = [];
  for (let i = from; i < to; i++) out.push(leafHash(new TextEncoder().encode(`leaf ${i}`)));
  return out;
};

async function cachedInclusion(reader: TileReader, index: number, size: number): Promise<Hash[]> {
  const plan = inclusionPlan(index, size);
  assert.ok(plan.ok);
  const proof = readProof(plan.value, await reader.readerFor(planNodes(plan.value)));
  assert.ok(proof.ok, proof.ok ? '' : proof.error);
  return proof.value;
}

async function cachedConsistency(reader: TileReader, from: number, to: number): Promise<Hash[]> {
  const plan = consistencyPlan(from, to);
  assert.ok(plan.ok);
  const proof = readProof(plan.value, await reader.readerFor(planNodes(plan.value)));
  assert.ok(proof.ok, proof.ok ? '' : proof.error);
  return proof.value;
}

const same = (a: Hash[], b: Hash[], what: string) => {
  assert.equal(a.length, b.length, what);
  a.forEach((h, i) => assert.ok(hashesEqual(h, b[i]!), `${what}: hash ${i}`));
};

for (const limit of [4096, 2]) {
  test(`proofs through one tile cache (limit ${limit}) stay right while the tree grows across tile boundaries`, async () => {
    const tree = new MemoryTree();
    const store = tileStore(tree);
    const reader = new TileReader(store, limit);
    const sizes = [1, 200, 255, 256, 257, 300, 511, 512, 700, 65_535, 65_536, 65_537, 66_000];
    const seen: number[] = [];
    for (const size of sizes) {
      assert.ok(tree.append(leaves(tree.size, size)).ok);
      seen.push(size);
      const indexes = [0, size - 1, Math.floor(size / 2), 255, 256, 65_535].filter((i) => i < size);
      for (const earlier of seen) {
        for (const index of indexes.filter((i) => i < earlier)) {
          const expected = inclusionProof(index, earlier, tree.read);
          assert.ok(expected.ok);
          same(await cachedInclusion(reader, index, earlier), expected.value, `leaf ${index} in ${earlier} (tree at ${size})`);
        }
        const consistent = consistencyProof(earlier, size, tree.read);
        assert.ok(consistent.ok);
        same(await cachedConsistency(reader, earlier, size), consistent.value, `${earlier} -> ${size}`);
      }
      // a partial tile's first hashes are served from what was read, and a wider one read afresh
      const edge = tileLevels(size)[0]!;
      const width = edge.partialWidth || TILE_WIDTH;
      const index = edge.partialWidth ? edge.fullTiles : edge.fullTiles - 1;
      const got = (await reader.tiles([{ level: 0, index, width }])).get(`0/${index}`)!;
      assert.equal(got.length, width);
      got.forEach((h, i) => assert.ok(hashesEqual(h, tree.read({ level: 0, index: index * TILE_WIDTH + i })!)));
    }
  });
}

test('a warm cache answers a proof at the latest size without the store; growth reads only the new right edge', async () => {
  const tree = new MemoryTree();
  const store = tileStore(tree);
  const reader = new TileReader(store);
  assert.ok(tree.append(leaves(0, 70_000)).ok);
  await cachedInclusion(reader, 12_345, 70_000);
  store.asked.length = 0;
  for (const index of [12_345, 12_300, 69_999, 65_536]) await cachedInclusion(reader, index, 70_000);
  assert.deepEqual(store.asked.sort(), ['0/256', '2/0'], 'only what the first proof did not need: the leaf tile of 65,536 and the root of its left half');
  store.asked.length = 0;
  await cachedInclusion(reader, 12_345, 70_000);
  assert.deepEqual(store.asked, []);
  assert.ok(tree.append(leaves(70_000, 70_100)).ok);
  await cachedInclusion(reader, 12_345, 70_100);
  assert.deepEqual(store.asked, ['0/273'], 'the partial tile that grew, once');
  store.asked.length = 0;
  await cachedInclusion(reader, 69_999, 70_100);
  await cachedInclusion(reader, 69_999, 70_000);
  assert.deepEqual(store.asked, []);
});
