// src/core/merkle.ts against every transparency-dev/merkle vector (196 proof probes, the reference
// tree, proof node plans), the constructed examples of the reference note, and properties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  appendLeaves,
  b64Decode,
  compactRangeRoot,
  consistencyPlan,
  consistencyProof,
  EMPTY_RANGE,
  emptyRoot,
  inclusionPlan,
  inclusionProof,
  leafHash,
  MemoryTree,
  nodeHash,
  planNodes,
  readCompactRange,
  readProof,
  rootFromHashes,
  rootFromInclusionProof,
  rootNodes,
  treeHead,
  utf8,
  verifyConsistency,
  verifyInclusion,
  type Hash,
  type LogResult,
  type NodeId,
  type ProofPlan,
} from '../../src/core/index.ts';
import { fromHex, loadMerkleVectors, toHex } from './log-helpers.ts';

type InclusionProbe = { leafIdx: number; treeSize: number; root: string; leafHash: string; proof: string[] | null; desc: string; wantErr: boolean };
type ConsistencyProbe = { size1: number; size2: number; root1: string; root2: string; proof: string[] | null; desc: string; wantErr: boolean };
type Probes<P> = { count: number; cases: { file: string; probe: P }[] };
type ReferenceTree = {
  leaf_inputs_hex: string[];
  node_hashes_by_level: string[][];
  root_by_size: string[];
  compact_trees_by_size: NodeId[][];
  reference_inclusion_proofs: { index: number; size: number; proof: string[] }[];
  reference_consistency_proofs: { size1: number; size2: number; proof: string[] }[];
  rfc6962_hasher: {
    empty_root: string;
    empty_leaf_hash: string;
    leaf: { data_ascii: string; hash: string };
    node: { left_ascii: string; right_ascii: string; hash: string };
  };
};
type PlanCase = { ids?: [number, number][]; rehash?: [number, number] | null; wantErr?: boolean };
type ProofNodes = {
  inclusion: (PlanCase & { size: number; index: number })[];
  consistency: (PlanCase & { size1: number; size2: number })[];
};
type Constructed = {
  inclusion: { index: number; size: number; leaf_hash: string; proof: string[]; root: string }[];
  consistency: { size1: number; size2: number; proof: string[] }[];
};

const reference = loadMerkleVectors<ReferenceTree>('tdm-reference-tree.json');
const leaves = reference.leaf_inputs_hex.map(fromHex);
const rootBySize = reference.root_by_size;

function b64(s: string): Uint8Array {
  const bytes = b64Decode(s);
  assert.ok(bytes, `vector holds strict base64: ${s}`);
  return bytes;
}

function hexes(hashes: Hash[]): string[] {
  return hashes.map(toHex);
}

function value<T>(r: LogResult<T>): T {
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

function referenceTree(): MemoryTree {
  const tree = new MemoryTree();
  value(tree.appendData(leaves));
  return tree;
}

/** transparency-dev lists a right-edge group lowest level first; ours is left to right. */
function tdmPlan(c: PlanCase): ProofPlan {
  const ids = c.ids!.map(([level, index]) => ({ level, index }));
  if (!c.rehash) return ids.map((id) => [id]);
  const [begin, end] = c.rehash;
  return [...ids.slice(0, begin).map((id) => [id]), ids.slice(begin, end).reverse(), ...ids.slice(end).map((id) => [id])];
}

describe('RFC 6962 hasher (rfc6962/rfc6962_test.go)', () => {
  const v = reference.rfc6962_hasher;
  it('empty root, empty leaf, leaf, node', () => {
    assert.equal(toHex(emptyRoot()), v.empty_root);
    assert.equal(toHex(treeHead([])), v.empty_root);
    assert.equal(toHex(leafHash(new Uint8Array(0))), v.empty_leaf_hash);
    assert.equal(toHex(leafHash(utf8(v.leaf.data_ascii))), v.leaf.hash);
    assert.equal(toHex(nodeHash(utf8(v.node.left_ascii), utf8(v.node.right_ascii))), v.node.hash);
  });
});

describe('reference tree (testonly/constants.go)', () => {
  const tree = referenceTree();

  it('stores exactly the published complete-subtree hashes', () => {
    reference.node_hashes_by_level.forEach((level, l) =>
      level.forEach((h, i) => assert.equal(toHex(tree.read({ level: l, index: i })!), h, `node ${l}/${i}`)),
    );
    assert.equal(tree.read({ level: 0, index: 8 }), undefined);
    assert.equal(tree.read({ level: 4, index: 0 }), undefined);
  });

  it('gives the root of every size 0-8 three ways: MTH, stored hashes, compact range', () => {
    assert.equal(rootBySize.length, 9);
    for (let size = 0; size <= 8; size++) {
      assert.equal(toHex(treeHead(leaves.slice(0, size).map(leafHash))), rootBySize[size], `MTH ${size}`);
      assert.equal(toHex(value(tree.root(size))), rootBySize[size], `stored ${size}`);
      assert.equal(toHex(value(rootFromHashes(size, tree.read))), rootBySize[size]);
      assert.equal(toHex(compactRangeRoot(value(readCompactRange(size, tree.read)))), rootBySize[size]);
    }
  });

  it('names the published compact range of every size', () => {
    reference.compact_trees_by_size.forEach((nodes, size) => assert.deepEqual(rootNodes(size), nodes, `size ${size}`));
  });

  it('builds the reference inclusion proofs (testonly/reference_test.go)', () => {
    assert.equal(reference.reference_inclusion_proofs.length, 7);
    for (const c of reference.reference_inclusion_proofs) {
      assert.deepEqual(hexes(value(inclusionProof(c.index, c.size, tree.read))), c.proof, `${c.index}:${c.size}`);
    }
  });

  it('builds the reference consistency proofs (testonly/reference_test.go)', () => {
    assert.equal(reference.reference_consistency_proofs.length, 4);
    for (const c of reference.reference_consistency_proofs) {
      assert.deepEqual(hexes(value(consistencyProof(c.size1, c.size2, tree.read))), c.proof, `${c.size1}:${c.size2}`);
    }
  });

  it('builds every proof of the 8-leaf tree, and each verifies', () => {
    for (let size = 1; size <= 8; size++) {
      const root = fromHex(rootBySize[size]!);
      for (let index = 0; index < size; index++) {
        const proof = value(inclusionProof(index, size, tree.read));
        assert.ok(verifyInclusion({ index, size, leafHash: leafHash(leaves[index]!), proof, root }).ok);
      }
      for (let size1 = 1; size1 <= size; size1++) {
        const proof = value(consistencyProof(size1, size, tree.read));
        assert.ok(verifyConsistency({ size1, size2: size, root1: fromHex(rootBySize[size1]!), root2: root, proof }).ok);
      }
    }
  });
});

describe('transparency-dev/merkle proof probes (testdata/inclusion, testdata/consistency)', () => {
  const inclusion = loadMerkleVectors<Probes<InclusionProbe>>('tdm-inclusion-probes.json');
  const consistency = loadMerkleVectors<Probes<ConsistencyProbe>>('tdm-consistency-probes.json');
  const tree = referenceTree();

  it('holds all 196 probes', () => {
    assert.equal(inclusion.cases.length, 98);
    assert.equal(consistency.cases.length, 98);
    assert.equal(inclusion.count + consistency.count, 196);
  });

  it('every inclusion probe verifies or fails as published', () => {
    let accepted = 0;
    for (const { file, probe } of inclusion.cases) {
      const proof = (probe.proof ?? []).map(b64);
      const verdict = verifyInclusion({ index: probe.leafIdx, size: probe.treeSize, leafHash: b64(probe.leafHash), proof, root: b64(probe.root) });
      assert.equal(verdict.ok, !probe.wantErr, `${file}: ${probe.desc}`);
      if (verdict.ok) accepted++;
      const onReferenceTree = probe.treeSize <= 8 && probe.root === Buffer.from(fromHex(rootBySize[probe.treeSize]!)).toString('base64');
      if (!probe.wantErr && onReferenceTree) {
        assert.deepEqual(value(inclusionProof(probe.leafIdx, probe.treeSize, tree.read)), proof, `${file}: generated proof`);
      }
    }
    assert.equal(accepted, inclusion.cases.filter((c) => !c.probe.wantErr).length);
    assert.ok(accepted > 0);
  });

  it('every consistency probe verifies or fails as published', () => {
    let accepted = 0;
    for (const { file, probe } of consistency.cases) {
      const proof = (probe.proof ?? []).map(b64);
      const verdict = verifyConsistency({ size1: probe.size1, size2: probe.size2, root1: b64(probe.root1), root2: b64(probe.root2), proof });
      assert.equal(verdict.ok, !probe.wantErr, `${file}: ${probe.desc}`);
      if (verdict.ok) accepted++;
      if (!probe.wantErr && probe.size2 <= 8 && probe.size1 > 0) {
        const generated = consistencyProof(probe.size1, probe.size2, tree.read);
        if (probe.root2 === Buffer.from(fromHex(rootBySize[probe.size2]!)).toString('base64')) assert.deepEqual(value(generated), proof, `${file}: generated proof`);
      }
    }
    assert.equal(accepted, consistency.cases.filter((c) => !c.probe.wantErr).length);
    assert.ok(accepted > 0);
  });
});

describe('proof node plans (proof/proof_test.go TestInclusion, TestConsistency)', () => {
  const v = loadMerkleVectors<ProofNodes>('tdm-proof-nodes.json');

  it('inclusion: reads the same stored nodes, rehashed the same way', () => {
    assert.equal(v.inclusion.length, 25);
    for (const c of v.inclusion) {
      const plan = inclusionPlan(c.index, c.size);
      if (c.wantErr) assert.equal(plan.ok, false, `${c.index}:${c.size}`);
      else assert.deepEqual(value(plan), tdmPlan(c), `${c.index}:${c.size}`);
    }
  });

  it('consistency: reads the same stored nodes, rehashed the same way', () => {
    assert.equal(v.consistency.length, 29);
    for (const c of v.consistency) {
      const plan = consistencyPlan(c.size1, c.size2);
      if (c.wantErr) assert.equal(plan.ok, false, `${c.size1}:${c.size2}`);
      else assert.deepEqual(value(plan), tdmPlan(c), `${c.size1}:${c.size2}`);
    }
  });
});

describe('constructed examples (tamper-evidence.md a.4)', () => {
  const v = loadMerkleVectors<Constructed>('constructed.json');
  const tree = referenceTree();

  it('inclusion proofs', () => {
    for (const c of v.inclusion) {
      assert.deepEqual(hexes(value(inclusionProof(c.index, c.size, tree.read))), c.proof);
      assert.equal(toHex(value(rootFromInclusionProof(c.index, c.size, fromHex(c.leaf_hash), c.proof.map(fromHex)))), c.root);
    }
  });

  it('consistency proofs', () => {
    for (const c of v.consistency) {
      assert.deepEqual(hexes(value(consistencyProof(c.size1, c.size2, tree.read))), c.proof);
      const verdict = verifyConsistency({
        size1: c.size1, size2: c.size2, root1: fromHex(rootBySize[c.size1]!), root2: fromHex(rootBySize[c.size2]!), proof: c.proof.map(fromHex),
      });
      assert.ok(verdict.ok);
    }
  });
});

describe('bad input is an error value', () => {
  const tree = referenceTree();

  it('proof generation', () => {
    assert.equal(inclusionProof(8, 8, tree.read).ok, false);
    assert.equal(inclusionProof(-1, 8, tree.read).ok, false);
    assert.equal(inclusionProof(0.5, 8, tree.read).ok, false);
    assert.equal(consistencyProof(0, 8, tree.read).ok, false);
    assert.equal(consistencyProof(5, 4, tree.read).ok, false);
    assert.equal(inclusionProof(0, 9, tree.read).ok, false, 'node past the stored tree');
    assert.equal(readProof([[{ level: 5, index: 0 }]], tree.read).ok, false);
  });

  it('appending to a wrong right edge', () => {
    const h = leafHash(utf8('x'));
    assert.equal(appendLeaves({ size: 3, hashes: [h] }, [h]).ok, false);
    assert.equal(appendLeaves({ size: 2, hashes: [new Uint8Array(31)] }, [h]).ok, false);
    assert.equal(appendLeaves(EMPTY_RANGE, [new Uint8Array(33)]).ok, false);
    assert.equal(appendLeaves({ size: Number.MAX_SAFE_INTEGER, hashes: [] }, [h]).ok, false);
  });

  it('verification of out-of-range sizes', () => {
    const h = leafHash(utf8('x'));
    assert.equal(verifyInclusion({ index: 2 ** 53, size: 2 ** 53 + 2, leafHash: h, proof: [], root: h }).ok, false);
    assert.equal(verifyConsistency({ size1: 1, size2: 2 ** 60, root1: h, root2: h, proof: [h] }).ok, false);
  });
});

// ---- properties ----

/** Distinct leaves, so that no two indexes share a proof by accident. */
const leafSet = (max: number) =>
  fc
    .tuple(fc.integer({ min: 1, max }), fc.uint8Array({ maxLength: 8 }))
    .map(([n, salt]) => Array.from({ length: n }, (_, i) => new Uint8Array([i >> 8, i & 255, ...salt])));

function flipped(h: Hash, byte: number, bit: number): Hash {
  const c = Uint8Array.from(h);
  c[byte % c.length]! ^= 1 << bit;
  return c;
}

/** Cuts 0..n into batches at the given points. */
function batches<T>(items: T[], cuts: number[]): T[][] {
  const points = [...new Set(cuts.map((c) => c % (items.length + 1)))].sort((a, b) => a - b);
  const out: T[][] = [];
  let from = 0;
  for (const p of [...points, items.length]) {
    out.push(items.slice(from, p));
    from = p;
  }
  return out;
}

describe('properties', () => {
  it('appending in any batches stores every complete subtree once and gives the MTH of every size', () => {
    fc.assert(
      fc.property(leafSet(200), fc.array(fc.nat(), { maxLength: 6 }), (data, cuts) => {
        const tree = new MemoryTree();
        const created: string[] = [];
        for (const batch of batches(data, cuts)) {
          for (const n of value(tree.append(batch.map(leafHash)))) created.push(`${n.level}/${n.index}`);
        }
        const n = data.length;
        let expected = 0;
        for (let span = 1; span <= n; span *= 2) expected += Math.floor(n / span);
        assert.equal(created.length, expected);
        assert.equal(new Set(created).size, expected);
        const hashes = data.map(leafHash);
        for (let size = 0; size <= n; size++) assert.deepEqual(value(tree.root(size)), treeHead(hashes.slice(0, size)));
      }),
      { numRuns: 40 },
    );
  });

  it('appendLeaves returns the right edge of the new size', () => {
    fc.assert(
      fc.property(leafSet(100), leafSet(100), (a, b) => {
        const tree = new MemoryTree();
        value(tree.appendData(a));
        const grown = value(appendLeaves(value(readCompactRange(a.length, tree.read)), b.map(leafHash)));
        value(tree.appendData(b));
        assert.deepEqual(grown.range, value(readCompactRange(a.length + b.length, tree.read)));
        assert.deepEqual(compactRangeRoot(grown.range), value(tree.root()));
      }),
      { numRuns: 40 },
    );
  });

  it('every inclusion proof verifies; a flipped bit, another index or another size does not', () => {
    fc.assert(
      fc.property(leafSet(130), fc.nat(), fc.nat(31), fc.nat(7), (data, pick, byte, bit) => {
        const tree = new MemoryTree();
        value(tree.appendData(data));
        for (let size = 1; size <= data.length; size++) {
          const root = value(tree.root(size));
          for (let index = 0; index < size; index++) {
            const proof = value(inclusionProof(index, size, tree.read));
            const leaf = leafHash(data[index]!);
            assert.ok(verifyInclusion({ index, size, leafHash: leaf, proof, root }).ok, `${index}:${size}`);
          }
          const index = pick % size;
          const proof = value(inclusionProof(index, size, tree.read));
          const leaf = leafHash(data[index]!);
          assert.equal(verifyInclusion({ index, size, leafHash: flipped(leaf, byte, bit), proof, root }).ok, false);
          assert.equal(verifyInclusion({ index, size, leafHash: leaf, proof, root: flipped(root, byte, bit) }).ok, false);
          if (proof.length > 0) {
            const at = pick % proof.length;
            const bad = proof.map((h, i) => (i === at ? flipped(h, byte, bit) : h));
            assert.equal(verifyInclusion({ index, size, leafHash: leaf, proof: bad, root }).ok, false);
            assert.equal(verifyInclusion({ index, size, leafHash: leaf, proof: proof.slice(1), root }).ok, false);
          }
          assert.equal(verifyInclusion({ index, size, leafHash: leaf, proof: [...proof, root], root }).ok, false);
          if (size > 1) assert.equal(verifyInclusion({ index: (index + 1) % size, size, leafHash: leaf, proof, root }).ok, false);
        }
      }),
      { numRuns: 12 },
    );
  });

  it('every consistency proof m <= n verifies; a flipped bit, a missing or an extra hash does not', () => {
    fc.assert(
      fc.property(leafSet(90), fc.nat(), fc.nat(31), fc.nat(7), (data, pick, byte, bit) => {
        const tree = new MemoryTree();
        value(tree.appendData(data));
        const roots = [emptyRoot(), ...data.map((_, i) => value(tree.root(i + 1)))];
        for (let size2 = 1; size2 <= data.length; size2++) {
          for (let size1 = 1; size1 <= size2; size1++) {
            const proof = value(consistencyProof(size1, size2, tree.read));
            const input = { size1, size2, root1: roots[size1]!, root2: roots[size2]!, proof };
            assert.ok(verifyConsistency(input).ok, `${size1}:${size2}`);
            if (size1 === size2) continue;
            assert.equal(verifyConsistency({ ...input, root1: flipped(input.root1, byte, bit) }).ok, false);
            assert.equal(verifyConsistency({ ...input, root2: flipped(input.root2, byte, bit) }).ok, false);
            const at = (pick + size1) % proof.length;
            assert.equal(verifyConsistency({ ...input, proof: proof.map((h, i) => (i === at ? flipped(h, byte, bit) : h)) }).ok, false);
            assert.equal(verifyConsistency({ ...input, proof: proof.slice(0, -1) }).ok, false);
            assert.equal(verifyConsistency({ ...input, proof: [...proof, roots[size2]!] }).ok, false);
          }
        }
      }),
      { numRuns: 8 },
    );
  });

  it('a plan reads only complete subtrees inside the tree, at most one proof hash per level', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.nat(), (size, pick) => {
        const index = pick % size;
        for (const plan of [value(inclusionPlan(index, size)), value(consistencyPlan(index + 1, size))]) {
          for (const node of planNodes(plan)) assert.ok((node.index + 1) * 2 ** node.level <= size);
          assert.ok(plan.length <= 41);
        }
      }),
    );
  });
});
