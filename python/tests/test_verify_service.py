"""The Python verifier against a real service on SQLite and PostgreSQL: it agrees with the server
(and with `ledger verify`) on every record of `ledger demo`, and names each kind of tampering; with
--performance, it finds every demo agent's report inputs bound to the agent and, like `ledger verify
--performance` (the same FAIL line), names the record or label of inputs that are not the agent's."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from conftest import skip_or_fail
from rewriting_proxy import RewritingProxy
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


def mirror_log(svc: Service, directory: Path) -> int:
    """Saves the checkpoint and every tile of the log under `directory`, as `ledger verify` reads a mirror."""
    import urllib.request

    from decision_ledger.log import tile_path, tiles_at
    from decision_ledger.note import open_checkpoint

    def save(path: str) -> bytes:
        with urllib.request.urlopen(f"{svc.base}/log/{path}", timeout=30) as r:
            data = r.read()
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_bytes(data)
        return data

    size = open_checkpoint(save("checkpoint").decode(), None).size
    for n, w in tiles_at(size):
        save(tile_path("entries", n, w))
    level, count = 0, size
    while count:
        for n, w in tiles_at(count):
            save(tile_path(level, n, w))
        level, count = level + 1, count // 256
    return size


def test_the_whole_log(service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    total = sum(a["decisions"] for a in service.agents)  # type: ignore[attr-defined]
    report = verify_source(f"{service.base}/log")
    assert report.ok and report.records == total, "\n".join(report.lines())
    assert next(c for c in report.extra if c.name == "checkpoint").ok is True
    assert ledger_verify(service, f"{service.base}/log")[0] == 0
    mirror = tmp_path / "mirror"
    assert mirror_log(service, mirror) == total
    assert main(["verify", str(mirror), "--vkey", _vkey(service)]) == 0
    entries = next(p for p in mirror.rglob("*") if p.is_file() and "entries" in p.parts)
    data = bytearray(entries.read_bytes())
    data[data.index(b'"seq":"') + 7] ^= 0x01  # a changed seq digit inside one entry
    entries.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["verify", str(mirror)]) == 1
    out = capsys.readouterr().out
    code, node_out = ledger_verify(service, str(mirror))
    assert code == 1 and failed_checks(out) == failed_checks(node_out), out + node_out
    assert {"tiles", "root", "chain_order"} <= failed_checks(out)


def _vkey(service: Service) -> str:
    import urllib.request

    with urllib.request.urlopen(f"{service.base}/transparency", timeout=10) as r:
        return str(json.load(r)["log"]["vkey"])


def test_tampered_proof_bundle(service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import base64
    import urllib.request

    signed = next(a for a in service.agents if a["signed"])  # type: ignore[attr-defined]
    record_id = json.loads(export_file(service, signed["handle"], tmp_path).read_text().split("\n")[2])["entry"]["id"]
    with urllib.request.urlopen(f"{service.base}/proof/{record_id}", timeout=30) as r:
        bundle = json.load(r)
    vkey = _vkey(service)
    intact = tmp_path / "proof.json"
    intact.write_text(json.dumps(bundle))
    assert main(["verify", str(intact), "--vkey", vkey]) == 0
    assert ledger_verify(service, str(intact))[0] == 0
    hashes = bundle["inclusion_proof"]["hashes"]
    hashes[0] = base64.b64encode(bytes(32)).decode()
    bad = tmp_path / "bad-proof.json"
    bad.write_text(json.dumps(bundle))
    capsys.readouterr()
    assert main(["verify", str(bad), "--vkey", vkey]) == 1
    out = capsys.readouterr().out
    assert "FAIL inclusion" in out and f"{record_id} log index" in out, out
    done = service.cli("verify", "--workers", "0", "--vkey", vkey, str(bad))
    assert done.returncode == 1


# ---------------------------------------------------------------------------------------------
# --performance: the reports' inputs bound to the agent (the figures are not computed again here)


def _agent_url(root: str, handle: str) -> str:
    return f"{root}/agents/{handle}"


def _root(service: Service) -> str:
    return service.base[: -len("/v1")]


def test_performance_inputs_of_every_demo_agent_are_bound(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    for agent in service.agents:  # type: ignore[attr-defined]
        capsys.readouterr()
        assert main(["verify", "--performance", _agent_url(_root(service), agent["handle"])]) == 0
        out = capsys.readouterr().out
        assert f"ok   chain of {agent['handle']}: seq 1 to" in out and "input records are exactly its decision records" in out, out
        assert re.search(r"ok   log: record seq \d+ \(dec_\w+\): the record is leaf \d+ .*checkpoint signed by ledger\.test/log", out), out
        assert "the figures are not computed again here" in out and out.rstrip().splitlines()[-1].startswith("verdict: PASS"), out
    done = service.cli("verify", "--performance", _agent_url(_root(service), service.agents[0]["handle"]))  # type: ignore[attr-defined]
    assert done.returncode == 0 and re.search(r"^ok   log: record seq \d+ .* is log index \d+", done.stdout, re.M), done.stdout


def _ndjson_edit(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[str, bytes], bytes]:
    """A rewrite of inputs bundles: `edit` changes the parsed lines; the end line's record count follows."""
    def rewrite(path: str, body: bytes) -> bytes:
        if "/performance/inputs" not in path:
            return body
        lines = [json.loads(l) for l in body.decode().splitlines() if l]
        edit(lines)
        lines[-1]["records"] = sum(1 for l in lines if l.get("kind") == "record")
        return ("\n".join(json.dumps(l, separators=(",", ":"), ensure_ascii=False) for l in lines) + "\n").encode()
    return rewrite


def _record(lines: list[dict[str, Any]], seq: int) -> dict[str, Any]:
    return next(l for l in lines if l.get("kind") == "record" and l["chain_seq"] == seq)


def _change_content(lines: list[dict[str, Any]]) -> None:
    record = _record(lines, 3)
    record["content"] = record["content"].replace('"canon_v1"', '"canon_v1" ', 1)


def _flip_synthetic(lines: list[dict[str, Any]]) -> None:
    lines[0]["synthetic"] = not lines[0]["synthetic"]


PERFORMANCE_TAMPERING = {
    "a record's content changed": (_change_content, r"record seq 3 \(dec_\w+\) of the inputs: its content hashes to [0-9a-f]{64}, the chain's content_hash is [0-9a-f]{64}"),
    "a record left out": (lambda lines: lines.remove(_record(lines, 2)), r"record seq 2 \(dec_\w+\), the chain's decision, is not in the inputs: left out"),
    "a record repeated": (lambda lines: lines.insert(lines.index(_record(lines, 4)), dict(_record(lines, 4))),
                          r"record seq 4 \(dec_\w+\) of the inputs comes after seq 4: a record added, repeated or out of chain order"),
    "a synthetic label contradicting the report": (_flip_synthetic, r"the report says synthetic: (true|false), its inputs synthetic: (true|false)"),
}


def _both_fail(service: Service, url: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Both verifiers exit 1 on `url` with the same FAIL line, matching `expected`."""
    capsys.readouterr()
    assert main(["verify", "--performance", url]) == 1
    out = capsys.readouterr().out
    python_fail = next((l.strip() for l in out.splitlines() if l.strip().startswith("FAIL")), "")
    assert re.fullmatch(f"FAIL performance model: {expected}", python_fail), out
    done = service.cli("verify", "--performance", url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert python_fail in done.stdout.splitlines(), done.stdout


@pytest.mark.parametrize("kind", list(PERFORMANCE_TAMPERING))
def test_performance_inputs_not_the_agents_fail_naming_the_record(service: Service, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    edit, expected = PERFORMANCE_TAMPERING[kind]
    proxy = RewritingProxy(_root(service), _ndjson_edit(edit))
    try:
        _both_fail(service, _agent_url(proxy.root, service.agents[0]["handle"]), expected, capsys)  # type: ignore[attr-defined]
    finally:
        proxy.close()


def test_performance_another_agents_report_under_this_name_fails(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    victim, source = service.agents[0]["handle"], service.agents[1]["handle"]  # type: ignore[attr-defined]
    renamed = lambda path, body: body.replace(f'"agent":"{source}"'.encode(), f'"agent":"{victim}"'.encode())  # noqa: E731
    route = lambda path: path.replace(f"/agents/{victim}/performance", f"/agents/{source}/performance")  # noqa: E731
    proxy = RewritingProxy(_root(service), renamed, route)
    try:
        _both_fail(service, _agent_url(proxy.root, victim), r"record seq 1 \(dec_\w+\) of the inputs: the chain's record at seq 1 is dec_\w+", capsys)
    finally:
        proxy.close()


def test_performance_unusable_input(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--performance", _agent_url(_root(service), "nobody-here")]) == 2
    assert main(["verify", "--performance", f"{service.base}/transparency"]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all(l.startswith("verdict: UNUSABLE INPUT: ") for l in lines), lines
