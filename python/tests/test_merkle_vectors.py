"""Every proof probe and reference value of test/vectors/merkle, and the C2SP notes."""
from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from conftest import load_vectors

from decision_ledger.merkle import (
    ProofError, leaf_hash, node_hash, root_hash, verify_consistency, verify_inclusion,
)
from decision_ledger.note import (
    NoteError, key_id, open_checkpoint, parse_tlog_proof, parse_vkey, split_note, verify_note,
)

INCLUSION = load_vectors("merkle/tdm-inclusion-probes.json")["cases"]
CONSISTENCY = load_vectors("merkle/tdm-consistency-probes.json")["cases"]
TREE = load_vectors("merkle/tdm-reference-tree.json")
NOTES = load_vectors("merkle/c2sp-notes.json")
CONSTRUCTED = load_vectors("merkle/constructed.json")
LEAVES = [leaf_hash(bytes.fromhex(h)) for h in TREE["leaf_inputs_hex"]]


def b64(items: list[str] | None) -> list[bytes]:
    return [base64.b64decode(i) for i in items or []]


@pytest.mark.parametrize("case", INCLUSION, ids=lambda c: c["file"])
def test_inclusion_probe(case: dict[str, Any]) -> None:
    p = case["probe"]
    args = (p["leafIdx"], p["treeSize"], base64.b64decode(p["leafHash"] or ""), b64(p["proof"]),
            base64.b64decode(p["root"] or ""))
    if p["wantErr"]:
        with pytest.raises(ProofError):
            verify_inclusion(*args)
    else:
        verify_inclusion(*args)


@pytest.mark.parametrize("case", CONSISTENCY, ids=lambda c: c["file"])
def test_consistency_probe(case: dict[str, Any]) -> None:
    p = case["probe"]
    args = (p["size1"], p["size2"], base64.b64decode(p["root1"] or ""), base64.b64decode(p["root2"] or ""),
            b64(p["proof"]))
    if p["wantErr"]:
        with pytest.raises(ProofError):
            verify_consistency(*args)
    else:
        verify_consistency(*args)


def test_reference_roots_and_hasher() -> None:
    for size, root in enumerate(TREE["root_by_size"]):
        assert root_hash(LEAVES[:size]).hex() == root
    for level, hashes in enumerate(TREE["node_hashes_by_level"]):
        width = 2**level
        for index, expected in enumerate(hashes):
            assert root_hash(LEAVES[index * width : (index + 1) * width]).hex() == expected
    hasher = TREE["rfc6962_hasher"]
    assert root_hash([]).hex() == hasher["empty_root"]
    assert leaf_hash(b"").hex() == hasher["empty_leaf_hash"]
    assert leaf_hash(hasher["leaf"]["data_ascii"].encode()).hex() == hasher["leaf"]["hash"]
    node = hasher["node"]
    assert node_hash(node["left_ascii"].encode(), node["right_ascii"].encode()).hex() == node["hash"]


def test_reference_proofs() -> None:
    roots = [bytes.fromhex(r) for r in TREE["root_by_size"]]
    for case in TREE["reference_inclusion_proofs"]:
        proof = [bytes.fromhex(h) for h in case["proof"]]
        verify_inclusion(case["index"], case["size"], LEAVES[case["index"]], proof, roots[case["size"]])
    for case in TREE["reference_consistency_proofs"]:
        proof = [bytes.fromhex(h) for h in case["proof"]]
        verify_consistency(case["size1"], case["size2"], roots[case["size1"]], roots[case["size2"]], proof)


def test_constructed_proofs() -> None:
    roots = [bytes.fromhex(r) for r in TREE["root_by_size"]]
    for case in CONSTRUCTED["inclusion"]:
        proof = [bytes.fromhex(h) for h in case["proof"]]
        verify_inclusion(case["index"], case["size"], bytes.fromhex(case["leaf_hash"]), proof,
                         bytes.fromhex(case["root"]))
    for case in CONSTRUCTED["consistency"]:
        proof = [bytes.fromhex(h) for h in case["proof"]]
        verify_consistency(case["size1"], case["size2"], roots[case["size1"]], roots[case["size2"]], proof)
        with pytest.raises(ProofError):
            verify_consistency(case["size1"], case["size2"], roots[case["size1"]], roots[case["size2"] - 1], proof)


def test_c2sp_signed_note_example() -> None:
    example = NOTES["signed_note_example"]
    verifier = parse_vkey(example["vkey"])
    assert verifier.key_id.hex() == example["key_id_hex"]
    assert verify_note(example["note"], verifier) == example["text"]
    with pytest.raises(NoteError):
        verify_note(example["note"].replace("example message", "example messagE"), verifier)


def test_c2sp_format_examples() -> None:
    poem = NOTES["signed_note_poem"]
    text, signatures = split_note(poem["note"])
    assert text == poem["text"] and [s.name for s in signatures] == poem["signature_names"]
    example = NOTES["checkpoint_example"]
    checkpoint = open_checkpoint(example["note"], None)
    assert (checkpoint.origin, checkpoint.size) == (example["origin"], example["size"])
    assert checkpoint.root == base64.b64decode(example["root_b64"])


def test_constructed_checkpoint_and_tlog_proof() -> None:
    spec = CONSTRUCTED["checkpoint"]
    verifier = parse_vkey(spec["vkey"])
    assert verifier.public_key.hex() == spec["public_key_hex"]
    assert key_id(spec["origin"], verifier.public_key) == verifier.key_id
    checkpoint = open_checkpoint(spec["note"], verifier)
    assert (checkpoint.origin, checkpoint.size, checkpoint.root.hex()) == (spec["origin"], spec["size"], spec["root_hex"])
    cosigned = CONSTRUCTED["cosigned_checkpoint"]
    assert open_checkpoint(cosigned["note"], verifier) == checkpoint
    with pytest.raises(NoteError):
        parse_vkey(cosigned["witness_vkey"])
    proof = parse_tlog_proof(CONSTRUCTED["tlog_proof"]["text"])
    assert proof.index == CONSTRUCTED["tlog_proof"]["leaf_index"]
    opened = open_checkpoint(proof.checkpoint_note, verifier)
    verify_inclusion(proof.index, opened.size, bytes.fromhex(CONSTRUCTED["tlog_proof"]["leaf_hash"]),
                     proof.hashes, opened.root)
    forged = spec["note"].replace("\n8\n", "\n9\n")
    with pytest.raises(NoteError):
        open_checkpoint(forged, verifier)


def test_tile_paths_and_counts() -> None:
    from decision_ledger.log import TILE_WIDTH, tile_index_path, tile_path, tiles_at

    example = NOTES["tiles_examples"]
    assert tile_index_path(example["index_path"]["index"]) == example["index_path"]["path"]
    for size_key in ("size_70000", "size_256"):
        size, expected = int(size_key.split("_")[1]), example[size_key]
        level, count = 0, size
        while f"level{level}_full" in expected:
            tiles = tiles_at(count)
            assert sum(1 for _, w in tiles if w == TILE_WIDTH) == expected[f"level{level}_full"]
            assert (tiles[-1][1] if tiles and tiles[-1][1] < TILE_WIDTH else 0) == expected[f"level{level}_partial"]
            level, count = level + 1, count // TILE_WIDTH
    built = [tile_path(0, n, w) for n, w in tiles_at(1000)] + [tile_path(1, n, w) for n, w in tiles_at(1000 // 256)]
    built += [tile_path("entries", n, w) for n, w in tiles_at(1000)]
    assert sorted(built) == sorted(CONSTRUCTED["tiles"]["size_1000_tiles"])
