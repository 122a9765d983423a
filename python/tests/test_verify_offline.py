"""The verifier on the chains.json vector made into an export, without a service: it passes, and
each kind of tampering fails under the check `ledger verify` names for it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import load_vectors

from decision_ledger.__main__ import main
from decision_ledger.verify import verify_export

CHAINS = load_vectors("canon_v1/chains.json")
ACTIVITIES = load_vectors("canon_v1/activities.json")


def export_lines(vectors: dict[str, Any] = CHAINS) -> tuple[str, list[str]]:
    CHAINS = vectors  # noqa: N806 (the vector file this export is made of)
    records = CHAINS["records"]
    lines = []
    for r in records:
        entry = {"canon": "canon_v1", "agent": CHAINS["agent"], "seq": str(r["seq"]), "id": r["id"], "type": r["type"],
                 "recorded_at": r["recorded_at"], "content_hash": r["content_hash"], "prev_hash": r["prev_hash"]}
        if "signature" in r:
            entry["signature"] = r["signature"]
        lines.append(json.dumps({"entry": entry, "chain_hash": r["chain_hash"], "content": r["content_canonical"]},
                                ensure_ascii=False, separators=(",", ":")))
    last = records[-1]
    header = {"object": "export", "format": "ledger-export-ndjson-v1", "canonicalisation": "canon_v1", "algorithm": "sha256",
              "agent": {"handle": CHAINS["agent"]}, "keys": CHAINS["keys"],
              "head": {"seq": last["seq"], "chain_hash": last["chain_hash"], "recorded_at": last["recorded_at"]},
              "records": len(records)}
    return json.dumps(header), lines


def edit_record(index: int, change: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        record = json.loads(lines[index])
        change(record)
        lines[index] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return edit


def flip_signature(record: dict[str, Any]) -> None:
    s = record["entry"]["signature"]["signature"]
    record["entry"]["signature"]["signature"] = ("A" if s[0] != "A" else "B") + s[1:]


CASES: dict[str, tuple[Callable[[list[str]], None], set[str], str]] = {
    "content byte": (edit_record(0, lambda r: r.update(content=r["content"].replace("AAPL", "AAPM"))),
                     {"content_bytes", "content_hash"}, "sha256 of the content text is"),
    "removed record": (lambda lines: lines.pop(1), {"seq", "prev_hash", "record_count"}, "expected seq 2, found 3"),
    "reordered": (lambda lines: lines.insert(0, lines.pop(1)), {"seq", "prev_hash"}, "expected seq 1, found 2"),
    "bad signature": (edit_record(1, flip_signature), {"signature", "chain_hash"},
                      "Ed25519 signature does not verify over the content under key"),
    "chain hash": (edit_record(2, lambda r: r.update(chain_hash="0" * 64)), {"chain_hash", "head"}, "expected chain_hash c32fe8"),
    "unknown member": (edit_record(2, lambda r: r.update(extra=1)), {"record_form", "head"}, 'has an unknown member "extra"'),
}


def test_key_revoked_before_the_record() -> None:
    pytest.importorskip("cryptography")
    header, lines = export_lines()
    document = json.loads(header)
    document["keys"][0]["revoked_at"] = "2025-06-02T12:00:00.122Z"  # 1 ms before record 2
    report = verify_export(json.dumps(document), lines, "vector")
    assert report.failed_names() == ["signature"]
    assert any("was revoked at 2025-06-02T12:00:00.122Z, before the record's recorded_at" in l for l in report.lines())
    document["keys"][0]["revoked_at"] = "2025-06-02T12:00:00.123Z"  # at recorded_at: still valid
    assert verify_export(json.dumps(document), lines, "vector").ok


def test_intact_export_passes() -> None:
    pytest.importorskip("cryptography")
    header, lines = export_lines()
    report = verify_export(header, lines, "vector")
    assert report.ok, "\n".join(report.lines())
    assert report.tallies["signature"].checked == 1 and report.tallies["content_hash"].checked == 3


@pytest.mark.parametrize("kind", list(CASES))
def test_tampering(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("cryptography")
    edit, failed, message = CASES[kind]
    header, lines = export_lines()
    edit(lines)
    report = verify_export(header, lines, "vector")
    assert set(report.failed_names()) == failed, "\n".join(report.lines())
    assert any(message in line for line in report.lines())
    path = tmp_path / "export.ndjson"
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    assert main(["verify", str(path)]) == 1
    assert "verdict: FAIL" in capsys.readouterr().out


def test_activity_chain_passes_and_a_changed_amount_fails() -> None:
    header, lines = export_lines(ACTIVITIES)
    report = verify_export(header, lines, "vector")
    assert report.ok, "\n".join(report.lines())
    assert report.tallies["content_hash"].checked == len(ACTIVITIES["records"])
    edit_record(3, lambda r: r.update(content=r["content"].replace('"amount":"25"', '"amount":"2500"')))(lines)
    report = verify_export(header, lines, "vector")
    assert set(report.failed_names()) == {"content_bytes", "content_hash"}, "\n".join(report.lines())


DEEP = 200_000


def test_json_nested_200000_deep_is_each_exit_code_never_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An intact export: 0. One of its records nested 200,000 deep: that record fails record_form,
    1. A document (the export's header, a proof bundle, a chain page) nested so: unusable, 2 and one line."""
    pytest.importorskip("cryptography")
    header, lines = export_lines()
    intact = tmp_path / "intact.ndjson"
    intact.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    assert main(["verify", str(intact)]) == 0
    capsys.readouterr()

    deep_record = tmp_path / "deep-record.ndjson"
    deep_record.write_text("\n".join([header, lines[0], '{"entry":' + "[" * DEEP + "]" * DEEP + "}", *lines[2:]]) + "\n", encoding="utf-8")
    assert main(["verify", str(deep_record)]) == 1
    out = capsys.readouterr().out
    assert "line 3: record nests JSON deeper than 128 levels" in out and "verdict: FAIL" in out

    for name, text in [
        ("deep-header.ndjson", '{"object":"export","x":' + "[" * DEEP + "]" * DEEP + "}\n" + "\n".join(lines)),
        ("deep-proof.json", '{"object":"proof","x":' + "[" * DEEP + "]" * DEEP + "}"),
        ("deep-array.json", "[" * DEEP + "]" * DEEP),
    ]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert main(["verify", str(path)]) == 2, name
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and out.startswith("verdict: UNUSABLE INPUT: ") and "nests JSON deeper than 128 levels" in out, out
