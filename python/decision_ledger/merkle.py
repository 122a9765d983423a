"""log_v1's Merkle tree: RFC 9162 hashing, tree roots, inclusion and consistency proof checks
(RFC 9162 §2.1.3.2 and §2.1.4.2), with transparency-dev's policy for the edge cases."""
from __future__ import annotations

import hashlib
from typing import Sequence


class ProofError(ValueError):
    """A proof does not verify; the message says which check failed."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_hash(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH over leaf hashes: the empty tree's root is sha256 of nothing."""
    if not leaf_hashes:
        return hashlib.sha256(b"").digest()
    level = list(leaf_hashes)
    while len(level) > 1:  # pairing left to right and carrying an odd last node up is RFC 9162's split
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def _shift_while_even(fn: int, sn: int) -> tuple[int, int]:
    while fn & 1 == 0 and fn != 0:
        fn >>= 1
        sn >>= 1
    return fn, sn


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    if index < 0 or index >= size:
        raise ProofError(f"leaf index {index} is not below the tree size {size}")
    if len(leaf) != 32:
        raise ProofError(f"a leaf hash is 32 bytes, not {len(leaf)}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError("inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            fn, sn = _shift_while_even(fn, sn)
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion proof is too short")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    if root_from_inclusion(index, size, leaf, proof) != root:
        raise ProofError(f"inclusion proof of leaf {index} does not lead to the root of tree size {size}")


def verify_consistency(
    size1: int, size2: int, root1: bytes, root2: bytes, proof: Sequence[bytes]
) -> None:
    if size1 < 1:
        raise ProofError("a consistency proof from an empty tree is refused")
    if size2 < size1:
        raise ProofError(f"tree size {size2} is smaller than {size1}")
    if size1 == size2:
        if proof:
            raise ProofError("equal tree sizes need an empty proof")
        if root1 != root2:
            raise ProofError("equal tree sizes with different roots")
        return
    if not proof:
        raise ProofError("empty consistency proof")
    path = list(proof)
    if size1 & (size1 - 1) == 0:
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("consistency proof is too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            fn, sn = _shift_while_even(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof is too short")
    if fr != root1:
        raise ProofError(f"consistency proof does not lead to the root of tree size {size1}")
    if sr != root2:
        raise ProofError(f"consistency proof does not lead to the root of tree size {size2}")
