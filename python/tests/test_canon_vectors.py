"""Every vector of test/vectors/canon_v1 (decimals, canonical, decisions, chains, activities)."""
from __future__ import annotations

import hashlib
from typing import Any

import pytest
from conftest import load_vectors

from decision_ledger import (
    CanonError, ContentError, DecimalTextError, canonical_bytes, canonicalise_json, chain_entry,
    chain_hash, content_hash, decision_content, normalise_decimal, read_json,
)
from decision_ledger.decision import parse_rfc3339

DECIMALS = load_vectors("canon_v1/decimals.json")["vectors"]
CANONICAL = load_vectors("canon_v1/canonical.json")["vectors"]
DECISIONS = load_vectors("canon_v1/decisions.json")["vectors"]
CHAINS = load_vectors("canon_v1/chains.json")
ACTIVITIES = load_vectors("canon_v1/activities.json")


@pytest.mark.parametrize("vector", DECIMALS, ids=lambda v: v["input"][:40])
def test_decimal(vector: dict[str, Any]) -> None:
    if "error" in vector:
        with pytest.raises(DecimalTextError) as caught:
            normalise_decimal(vector["input"])
        assert caught.value.kind == vector["error"]
    else:
        assert normalise_decimal(vector["input"]) == vector["output"]


@pytest.mark.parametrize("vector", CANONICAL, ids=lambda v: v["name"])
def test_canonical(vector: dict[str, Any]) -> None:
    if "error" in vector:
        with pytest.raises(CanonError) as caught:
            canonicalise_json(vector["input"])
        assert (caught.value.stage, caught.value.path) == (vector["error"]["stage"], vector["error"]["path"])
    else:
        out = canonicalise_json(vector["input"])
        assert out.decode("utf-8") == vector["output"]
        assert hashlib.sha256(out).hexdigest() == vector["sha256"]


def now_ms(text: str) -> int:
    return int(parse_rfc3339(text) * 1000)


@pytest.mark.parametrize("vector", DECISIONS, ids=lambda v: v["name"])
def test_decision(vector: dict[str, Any]) -> None:
    def build() -> dict[str, Any]:
        return decision_content(
            read_json(vector["body"]), agent=vector["agent"], now_ms=now_ms(vector["now"]),
            nonce=vector.get("nonce"),
        )

    if "error" in vector:
        expected = vector["error"]
        error_type = CanonError if expected["stage"] == "read" else ContentError
        with pytest.raises(error_type) as caught:
            build()
        param = caught.value.path if isinstance(caught.value, CanonError) else caught.value.param
        assert param == expected["param"]
    else:
        content = build()
        assert canonical_bytes(content).decode("utf-8") == vector["payload"]
        assert content_hash(content) == vector["content_hash"]


@pytest.mark.parametrize("record", CHAINS["records"], ids=lambda r: str(r["seq"]))
def test_chain_record(record: dict[str, Any]) -> None:
    assert canonical_bytes(record["content"]).decode("utf-8") == record["content_canonical"]
    assert content_hash(record["content"]) == record["content_hash"]
    entry = chain_entry(
        agent=CHAINS["agent"], seq=record["seq"], record_id=record["id"], record_type=record["type"],
        recorded_at=record["recorded_at"], content_hash=record["content_hash"],
        prev_hash=record["prev_hash"], signature=record.get("signature"),
    )
    assert canonical_bytes(entry).decode("utf-8") == record["chain_entry_canonical"]
    assert chain_hash(entry) == record["chain_hash"]


def test_chain_links() -> None:
    for vectors in (CHAINS, ACTIVITIES):
        records = vectors["records"]
        assert records[0]["prev_hash"] == "0" * 64
        for before, after in zip(records, records[1:]):
            assert after["prev_hash"] == before["chain_hash"]


@pytest.mark.parametrize("record", ACTIVITIES["records"], ids=lambda r: str(r["seq"]))
def test_activity_record(record: dict[str, Any]) -> None:
    content = record["content"]
    assert content["type"] == "activity" and record["type"] == "activity" and record["id"].startswith("act_")
    assert canonical_bytes(content).decode("utf-8") == record["content_canonical"]
    assert content_hash(content) == record["content_hash"]
    entry = chain_entry(
        agent=ACTIVITIES["agent"], seq=record["seq"], record_id=record["id"], record_type=record["type"],
        recorded_at=record["recorded_at"], content_hash=record["content_hash"], prev_hash=record["prev_hash"], signature=None,
    )
    assert canonical_bytes(entry).decode("utf-8") == record["chain_entry_canonical"]
    assert chain_hash(entry) == record["chain_hash"]


@pytest.mark.parametrize("vector", [v for v in CANONICAL if "error" not in v], ids=lambda v: v["name"])
def test_fast_canonical_path_agrees(vector: dict[str, Any]) -> None:
    from decision_ledger.canon import canonical_text_of_read, normalise_numbers

    assert canonical_text_of_read(normalise_numbers(read_json(vector["input"]))) == vector["output"]


def test_numbers_are_never_written_as_strings() -> None:
    from decision_ledger.canon import canonical_text_of_read

    for value in ({"a": read_json("1.5")}, {"a": 1}, [2.5]):
        with pytest.raises(TypeError):
            canonical_bytes(value)
    with pytest.raises(TypeError):
        canonical_text_of_read(read_json('{"a":[1]}'))
