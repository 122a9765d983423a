"""The Python verifier against a real service on SQLite and PostgreSQL: it agrees with the server
(and with `ledger verify`) on every record of `ledger demo`, and names each kind of tampering."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from conftest import skip_or_fail
from service import LEDGER, NODE, Service, postgres_reachable

from decision_ledger.__main__ import main
from decision_ledger.sources import verify_source



@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    if NODE is None or not (LEDGER.parent.parent / "dist").is_dir():
        skip_or_fail("node and the compiled build (npm run build) are needed")
    if request.param == "postgres" and not postgres_reachable():
        skip_or_fail("PostgreSQL is not reachable on 127.0.0.1:5432")
    svc = Service(request.param)
    try:
        svc.agents = svc.demo("pyv")  # type: ignore[attr-defined]
        svc.start()
        svc.wait_integrated(sum(a["decisions"] for a in svc.agents))  # type: ignore[attr-defined]
        yield svc
    finally:
        svc.stop()


def ledger_verify(svc: Service, source: str) -> tuple[int, str]:
    done = svc.cli("verify", "--workers", "0", source)
    return done.returncode, done.stdout


def failed_checks(output: str) -> set[str]:
    match = re.search(r"verdict: FAIL: (.*) failed;", output)
    return set(match.group(1).split(", ")) if match else set()


def export_file(svc: Service, handle: str, tmp_path: Path) -> Path:
    import urllib.request

    path = tmp_path / f"{handle}.ndjson"
    with urllib.request.urlopen(f"{svc.base}/export?agent={handle}", timeout=30) as r:
        path.write_bytes(r.read())
    return path


def test_every_demo_record_verifies(service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for agent in service.agents:  # type: ignore[attr-defined]
        url = f"{service.base}/export?agent={agent['handle']}"
        report = verify_source(url)
        assert report.ok, "\n".join(report.lines())
        assert report.records == agent["decisions"]
        assert report.tallies["content_hash"].checked == agent["decisions"]
        if agent["signed"]:
            assert report.tallies["signature"].checked == agent["decisions"]
        chain = verify_source(f"{service.base}/agents/{agent['handle']}/chain")
        assert chain.ok and chain.records == agent["decisions"], "\n".join(chain.lines())
        code, _ = ledger_verify(service, url)
        assert code == 0
        bare = verify_source(f"{service.base}/agents/{agent['handle']}/chain?payloads=false&limit=3")
        assert bare.ok and bare.records == agent["decisions"], "\n".join(bare.lines())
        assert bare.tallies["content_hash"].skipped == agent["decisions"] and bare.tallies["chain_hash"].checked == agent["decisions"]
        path = export_file(service, agent["handle"], tmp_path)
        assert main(["verify", str(path)]) == 0
        for line in path.read_text().splitlines()[1:]:  # the server's proof of each record verifies too
            record_id = json.loads(line)["entry"]["id"]
            proof = verify_source(f"{service.base}/proof/{record_id}")
            assert proof.ok, "\n".join(proof.lines())
            inclusion = next(c for c in proof.extra if c.name == "inclusion")
            assert inclusion.ok and "checkpoint signed by ledger.test/log" in inclusion.summary
    capsys.readouterr()


def tamper(path: Path, edit: "callable[[list[str]], None]") -> Path:  # type: ignore[valid-type]
    lines = path.read_text().splitlines()
    edit(lines)
    out = path.with_name("tampered-" + path.name)
    out.write_text("\n".join(lines) + "\n")
    return out


def change_content_byte(lines: list[str]) -> None:
    record = json.loads(lines[3])
    record["content"] = record["content"].replace('"BUY"', '"BUX"', 1).replace('"SELL"', '"SELX"', 1).replace('"HOLD"', '"HOLX"', 1) \
        if any(a in record["content"] for a in ('"BUY"', '"SELL"', '"HOLD"')) else record["content"].replace("canon_v1", "canon_v2")
    lines[3] = json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def bad_signature(lines: list[str]) -> None:
    record = json.loads(lines[2])
    signature = record["entry"]["signature"]["signature"]
    record["entry"]["signature"]["signature"] = ("B" if signature[0] == "A" else "A") + signature[1:]
    lines[2] = json.dumps(record, separators=(",", ":"), ensure_ascii=False)


TAMPERING = {
    "changed content byte": (change_content_byte, {"content_bytes", "content_hash", "signature"},
                             "sha256 of the content text is"),
    "removed record": (lambda lines: lines.pop(3), {"seq", "prev_hash", "record_count"}, "expected seq 3, found 4"),
    "reordered records": (lambda lines: lines.insert(4, lines.pop(3)), {"seq", "prev_hash", "recorded_at"}, "expected seq 3, found 4"),
    "bad signature": (bad_signature, {"signature", "chain_hash"},
                      "Ed25519 signature does not verify over the content under key"),
}


@pytest.mark.parametrize("kind", list(TAMPERING))
def test_tampering_is_detected(service: Service, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    signed = next(a for a in service.agents if a["signed"])  # type: ignore[attr-defined]
    edit, expected, message = TAMPERING[kind]
    path = tamper(export_file(service, signed["handle"], tmp_path), edit)
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    output = capsys.readouterr().out
    assert message in output
    python_failed = failed_checks(output)
    code, node_output = ledger_verify(service, str(path))
    assert code == 1
    assert python_failed == failed_checks(node_output)
    assert python_failed == expected, output


def test_unusable_input(service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.ndjson"
    empty.write_text("")
    assert main(["verify", str(empty)]) == 2
    assert main(["verify", f"{service.base}/export?agent=nobody-here"]) == 2
    assert "verdict: UNUSABLE INPUT" in capsys.readouterr().out
    assert ledger_verify(service, str(empty))[0] == 2
