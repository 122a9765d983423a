// The log_v1 Merkle tree (RFC 9162 §2.1, same as RFC 6962): leaf and node hashes, tree heads,
// inclusion and consistency proofs, and the bookkeeping of a stored tree.
// It owns every hash of the global log's tree and every proof about it. A stored tree keeps only
// the hashes of complete subtrees (what tlog-tiles serves); proofs and tree heads of any size are
// assembled from those, so nothing ever rehashes the whole tree. Sizes and indexes are JS numbers,
// safe integers only; the maths uses division, never the 32-bit bitwise operators, so trees past
// 2^31 leaves work.

import { sha256 } from './sha256.ts';

export const HASH_SIZE = 32;

export type Hash = Uint8Array;

/** Errors as values: the log's functions never throw on bad input. */
export type LogResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** The complete subtree of 2^level leaves starting at leaf index * 2^level. */
export type NodeId = { level: number; index: number };

export type StoredNode = NodeId & { hash: Hash };

/** Where proof generation reads stored complete-subtree hashes; undefined when not stored. */
export type HashReader = (node: NodeId) => Hash | undefined;

/**
 * A proof before its hashes are read: one entry per proof hash, each the complete subtrees whose
 * hashes make it up, left to right. An entry has more than one node only on the tree's right
 * edge, where the proof needs the head of an incomplete subtree.
 */
export type ProofPlan = NodeId[][];

/** The right edge of a tree: the hashes of rootNodes(size), left to right (largest first). */
export type CompactRange = { size: number; hashes: Hash[] };

export const EMPTY_RANGE: CompactRange = { size: 0, hashes: [] };

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

function ok<T>(value: T): LogResult<T> {
  return { ok: true, value };
}

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

export function leafHash(leafData: Uint8Array): Hash {
  return sha256(LEAF_PREFIX, leafData);
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256(NODE_PREFIX, left, right);
}

/** MTH({}) = SHA-256 of the empty string. */
export function emptyRoot(): Hash {
  return sha256(new Uint8Array(0));
}

export function isHash(h: unknown): h is Hash {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A tree size or leaf index: a non-negative safe integer. */
export function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function half(n: number): number {
  return Math.floor(n / 2);
}

function isOdd(n: number): boolean {
  return n % 2 === 1;
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !isOdd(n)) n = half(n);
  return n === 1;
}

/** The k of RFC 9162 §2.1: the largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH of leaf hashes, straight from the definition. For tests and small trees; a stored tree uses rootFromHashes. */
export function treeHead(leafHashes: readonly Hash[]): Hash {
  return mth(leafHashes, 0, leafHashes.length);
}

function mth(leaves: readonly Hash[], lo: number, hi: number): Hash {
  if (hi === lo) return emptyRoot();
  if (hi - lo === 1) return leaves[lo]!;
  const k = splitPoint(hi - lo);
  return nodeHash(mth(leaves, lo, lo + k), mth(leaves, lo + k, hi));
}

/**
 * The fewest complete subtrees covering leaves [start, end), left to right. With start a multiple
 * of a power of two at least end - start (always so in a proof), their sizes strictly decrease.
 */
export function rangeNodes(start: number, end: number): NodeId[] {
  const nodes: NodeId[] = [];
  let lo = start;
  while (lo < end) {
    let size = 1;
    let level = 0;
    while (lo % (size * 2) === 0 && lo + size * 2 <= end) {
      size *= 2;
      level++;
    }
    nodes.push({ level, index: lo / size });
    lo += size;
  }
  return nodes;
}

/** The complete subtrees whose hashes give the tree head of `size` leaves. */
export function rootNodes(size: number): NodeId[] {
  return rangeNodes(0, size);
}

/** The head of a right-edge range from its complete subtrees' hashes, left to right. */
export function rangeHead(hashes: readonly Hash[]): Hash {
  if (hashes.length === 0) return emptyRoot();
  let h = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) h = nodeHash(hashes[i]!, h);
  return h;
}

function read(reader: HashReader, node: NodeId): LogResult<Hash> {
  const h = reader(node);
  if (!isHash(h)) return fail(`hash of node level ${node.level} index ${node.index} is not stored`);
  return ok(h);
}

/** The tree head of `size` leaves from stored complete-subtree hashes. */
export function rootFromHashes(size: number, reader: HashReader): LogResult<Hash> {
  const range = readCompactRange(size, reader);
  return range.ok ? ok(compactRangeRoot(range.value)) : range;
}

// ---- Proof generation (RFC 9162 §2.1.3.1 PATH, §2.1.4.1 PROOF / SUBPROOF), on leaf ranges ----

function plan(ranges: [number, number][]): ProofPlan {
  return ranges.map(([lo, hi]) => rangeNodes(lo, hi));
}

/** Which stored hashes the inclusion proof of leaf `index` in the tree of `size` leaves needs. */
export function inclusionPlan(index: number, size: number): LogResult<ProofPlan> {
  if (!isCount(index) || !isCount(size)) return fail('index and size must be non-negative safe integers');
  if (index >= size) return fail(`leaf index ${index} is not in a tree of size ${size}`);
  const ranges: [number, number][] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
    }
  }
  return ok(plan(ranges.reverse()));
}

/**
 * Which stored hashes the consistency proof from size1 to size2 needs. Requires
 * 0 < size1 <= size2: a proof from the empty tree proves nothing (and log_v1 never signs one).
 */
export function consistencyPlan(size1: number, size2: number): LogResult<ProofPlan> {
  if (!isCount(size1) || !isCount(size2)) return fail('sizes must be non-negative safe integers');
  if (size1 === 0) return fail('no consistency proof from the empty tree');
  if (size1 > size2) return fail(`size1 ${size1} is larger than size2 ${size2}`);
  const ranges: [number, number][] = [];
  let lo = 0;
  let hi = size2;
  let headKnown = true; // the verifier holds MTH(D[0:size1]) itself, so SUBPROOF's b starts true
  while (size1 !== hi) {
    const k = splitPoint(hi - lo);
    if (size1 <= lo + k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
      headKnown = false;
    }
  }
  if (!headKnown) ranges.push([lo, hi]);
  return ok(plan(ranges.reverse()));
}

/** Every node a plan reads, each once, in plan order: one batch for a store. */
export function planNodes(proofPlan: ProofPlan): NodeId[] {
  const seen = new Set<string>();
  const out: NodeId[] = [];
  for (const node of proofPlan.flat()) {
    const key = `${node.level}/${node.index}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(node);
    }
  }
  return out;
}

/** Reads a plan's hashes and assembles the proof. */
export function readProof(proofPlan: ProofPlan, reader: HashReader): LogResult<Hash[]> {
  const proof: Hash[] = [];
  for (const entry of proofPlan) {
    const hashes: Hash[] = [];
    for (const node of entry) {
      const h = read(reader, node);
      if (!h.ok) return h;
      hashes.push(h.value);
    }
    proof.push(rangeHead(hashes));
  }
  return ok(proof);
}

export function inclusionProof(index: number, size: number, reader: HashReader): LogResult<Hash[]> {
  const p = inclusionPlan(index, size);
  return p.ok ? readProof(p.value, reader) : p;
}

export function consistencyProof(size1: number, size2: number, reader: HashReader): LogResult<Hash[]> {
  const p = consistencyPlan(size1, size2);
  return p.ok ? readProof(p.value, reader) : p;
}

// ---- Proof verification (RFC 9162 §2.1.3.2 and §2.1.4.2) ----

/** Shifts fn and sn right until fn is odd or zero, at least once (the "repeat ... until" of RFC 9162). */
function skipLevelsWithoutRightSibling(fn: number, sn: number): [number, number] {
  do {
    fn = half(fn);
    sn = half(sn);
  } while (!isOdd(fn) && fn !== 0);
  return [fn, sn];
}

/** The tree head an inclusion proof leads to. */
export function rootFromInclusionProof(index: number, size: number, leaf: Hash, proof: readonly Hash[]): LogResult<Hash> {
  if (!isCount(index) || !isCount(size)) return fail('index and size must be non-negative safe integers');
  if (index >= size) return fail(`leaf index ${index} is not in a tree of size ${size}`);
  if (!isHash(leaf)) return fail('leaf hash is not 32 bytes');
  if (!proof.every(isHash)) return fail('a proof hash is not 32 bytes');
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return fail('proof is too long');
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) [fn, sn] = skipLevelsWithoutRightSibling(fn, sn);
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return fail('proof is too short');
  return ok(r);
}

export type Verdict = { ok: true } | { ok: false; error: string };

export function verifyInclusion(input: {
  index: number;
  size: number;
  leafHash: Hash;
  proof: readonly Hash[];
  root: Hash;
}): Verdict {
  const r = rootFromInclusionProof(input.index, input.size, input.leafHash, input.proof);
  if (!r.ok) return r;
  if (!hashesEqual(r.value, input.root)) return { ok: false, error: 'proof does not lead to the root' };
  return { ok: true };
}

/**
 * Checks that the tree of size1 with root1 is a prefix of the tree of size2 with root2.
 * Policy as transparency-dev/merkle (its vectors pin it): size1 must be > 0; equal sizes need an
 * empty proof and identical roots.
 */
export function verifyConsistency(input: {
  size1: number;
  size2: number;
  root1: Hash;
  root2: Hash;
  proof: readonly Hash[];
}): Verdict {
  const { size1, size2, root1, root2, proof } = input;
  if (!isCount(size1) || !isCount(size2)) return { ok: false, error: 'sizes must be non-negative safe integers' };
  if (size1 > size2) return { ok: false, error: `size1 ${size1} is larger than size2 ${size2}` };
  if (size1 === 0) return { ok: false, error: 'no consistency proof from the empty tree' };
  if (size1 === size2) {
    if (proof.length !== 0) return { ok: false, error: 'equal sizes need an empty proof' };
    return hashesEqual(root1, root2) ? { ok: true } : { ok: false, error: 'equal sizes with different roots' };
  }
  if (proof.length === 0) return { ok: false, error: 'proof is empty' };
  if (!isHash(root1) || !isHash(root2)) return { ok: false, error: 'a root is not 32 bytes' };
  if (!proof.every(isHash)) return { ok: false, error: 'a proof hash is not 32 bytes' };

  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return { ok: false, error: 'proof is too long' };
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) [fn, sn] = skipLevelsWithoutRightSibling(fn, sn);
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return { ok: false, error: 'proof is too short' };
  if (!hashesEqual(fr, root1)) return { ok: false, error: 'proof does not lead to root1' };
  if (!hashesEqual(sr, root2)) return { ok: false, error: 'proof does not lead to root2' };
  return { ok: true };
}

// ---- Growing a stored tree ----

function popCount(n: number): number {
  let c = 0;
  for (; n > 0; n = half(n)) if (isOdd(n)) c++;
  return c;
}

export function readCompactRange(size: number, reader: HashReader): LogResult<CompactRange> {
  if (!isCount(size)) return fail('size must be a non-negative safe integer');
  const hashes: Hash[] = [];
  for (const node of rootNodes(size)) {
    const h = read(reader, node);
    if (!h.ok) return h;
    hashes.push(h.value);
  }
  return ok({ size, hashes });
}

export function compactRangeRoot(range: CompactRange): Hash {
  return rangeHead(range.hashes);
}

/**
 * Appends leaves to a tree given by its right edge. Returns the new right edge and every complete
 * subtree the batch creates (each new leaf at level 0 and each new interior node), in creation
 * order: exactly what a store must persist to serve proofs and tiles for every later size.
 */
export function appendLeaves(
  range: CompactRange,
  leafHashes: readonly Hash[],
): LogResult<{ range: CompactRange; nodes: StoredNode[] }> {
  if (!isCount(range.size)) return fail('size must be a non-negative safe integer');
  if (range.hashes.length !== popCount(range.size) || !range.hashes.every(isHash)) {
    return fail(`a tree of size ${range.size} has a right edge of ${popCount(range.size)} hashes`);
  }
  if (!leafHashes.every(isHash)) return fail('a leaf hash is not 32 bytes');
  if (!isCount(range.size + leafHashes.length)) return fail('the tree would outgrow safe integers');

  const edge = [...range.hashes];
  const nodes: StoredNode[] = [];
  let size = range.size;
  for (const leaf of leafHashes) {
    let h = leaf;
    let level = 0;
    let index = size;
    nodes.push({ level, index, hash: h });
    while (isOdd(index)) {
      h = nodeHash(edge.pop()!, h);
      level++;
      index = half(index);
      nodes.push({ level, index, hash: h });
    }
    edge.push(h);
    size++;
  }
  return ok({ range: { size, hashes: edge }, nodes });
}

/** A tree held in memory, complete subtrees only: the reference store for tests and small tools. */
export class MemoryTree {
  private readonly levels: Hash[][] = [];
  private edge: CompactRange = EMPTY_RANGE;

  get size(): number {
    return this.edge.size;
  }

  /** Appends leaf hashes; returns the new stored nodes. */
  append(leafHashes: readonly Hash[]): LogResult<StoredNode[]> {
    const r = appendLeaves(this.edge, leafHashes);
    if (!r.ok) return r;
    for (const n of r.value.nodes) (this.levels[n.level] ??= [])[n.index] = n.hash;
    this.edge = r.value.range;
    return ok(r.value.nodes);
  }

  /** Appends leaf data (hashed as leaves). */
  appendData(entries: readonly Uint8Array[]): LogResult<StoredNode[]> {
    return this.append(entries.map(leafHash));
  }

  readonly read: HashReader = (node) => this.levels[node.level]?.[node.index];

  root(size: number = this.size): LogResult<Hash> {
    if (!isCount(size) || size > this.size) return fail(`no tree of size ${size} (the tree has ${this.size} leaves)`);
    return rootFromHashes(size, this.read);
  }
}
