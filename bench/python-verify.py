#!/usr/bin/env python3
"""The Python verifier (python/decision_ledger) on a 10,000-record export, against a baseline in
the same run that only makes the SHA-256 calls a verifier must make (hashlib over each content
string and each canonical chain entry, as bench/read.ts's baseline), and the verdict of
`ledger verify` on the same export, intact and with one content byte changed.

    npm run build && /usr/bin/python3 bench/python-verify.py [--records 10000] [--rounds 3]

The export is built here with the package's canon_v1 (every other record signed with the RFC 8032
test key); `ledger verify` is the independent check that it is a valid export.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from decision_ledger import canonical_bytes, canonical_text, chain_entry, decision_content, read_json  # noqa: E402
from decision_ledger.signing import SigningKey  # noqa: E402
from decision_ledger.sources import verify_source  # noqa: E402

GOAL = 0.5
SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
KEY_ID = "aid_01JX0Y2W4S6V8Z0B2D4F6H8K0M"
AGENT = "bench-python"


def build_export(path: Path, records: int) -> None:
    key = SigningKey(SEED)
    start = datetime(2026, 1, 5, 14, 30, tzinfo=timezone.utc)
    prev = "0" * 64
    lines = []
    for seq in range(1, records + 1):
        at = start + timedelta(seconds=seq * 7)
        fields = read_json(json.dumps({
            "symbol": ("AAPL", "MSFT", "BTC-USD", "NVDA")[seq % 4], "action": ("BUY", "SELL", "HOLD", "REDUCE")[seq % 4],
            "quantity": f"{seq % 97 + 1}.{seq % 10}0", "confidence": "0.%02d" % (seq % 100),
            "thesis": f"Décision n°{seq}: momentum — see note\u2028{seq * 31 % 1000}",
            "metadata": {"model": "bench", "features": {"z": f"-{seq % 7}.25", "n": seq}, "tags": ["a", "é"]},
        }))
        nonce = f"bench-{seq}" if seq % 2 else None
        content = decision_content(fields, agent=AGENT, nonce=nonce)
        payload = canonical_bytes(content)
        signature = {"key_id": KEY_ID, "nonce": nonce, "signature": key.sign(payload)} if nonce else None
        entry = chain_entry(agent=AGENT, seq=seq, record_id=f"dec_{seq:026d}", record_type="decision",
                            recorded_at=at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{seq % 1000:03d}Z",
                            content_hash=hashlib.sha256(payload).hexdigest(), prev_hash=prev, signature=signature)
        chain_hash = hashlib.sha256(canonical_bytes(entry)).hexdigest()
        lines.append(json.dumps({"entry": entry, "chain_hash": chain_hash, "content": payload.decode("utf-8")},
                                ensure_ascii=False, separators=(",", ":")))
        prev = chain_hash
    header = {"object": "export", "format": "ledger-export-ndjson-v1", "canonicalisation": "canon_v1",
              "algorithm": "sha256", "agent": {"handle": AGENT},
              "keys": [{"id": KEY_ID, "public_key": key.public_key_b64url, "revoked_at": None}],
              "head": {"seq": records, "chain_hash": prev, "recorded_at": None}, "records": records}
    path.write_text(json.dumps(header) + "\n" + "\n".join(lines) + "\n", encoding="utf-8")


def baseline_seconds(path: Path) -> float:
    """Only the hashing timed: sha256 of each content string and of each canonical chain entry."""
    strings: list[bytes] = []
    for line in filter(None, path.read_text(encoding="utf-8").split("\n")[1:]):  # not splitlines: U+2028 is inside strings
        record = json.loads(line)
        strings += [record["content"].encode("utf-8"), canonical_text(record["entry"]).encode("utf-8")]
    started = time.perf_counter()
    for s in strings:
        hashlib.sha256(s).hexdigest()
    return time.perf_counter() - started


def python_verify(path: Path) -> tuple[float, bool, list[str]]:
    started = time.perf_counter()
    report = verify_source(str(path))
    return time.perf_counter() - started, report.ok, report.failed_names()


def ledger_verify(path: Path) -> tuple[float, int, list[str]]:
    started = time.perf_counter()
    done = subprocess.run(["node", str(ROOT / "bin" / "ledger.js"), "verify", str(path)], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    verdict = next((l for l in done.stdout.splitlines() if l.startswith("verdict: FAIL: ")), "")
    failed = verdict.removeprefix("verdict: FAIL: ").split(" failed;")[0].split(", ") if verdict else []
    return seconds, done.returncode, failed


def tamper(path: Path, out: Path, line_number: int) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    record = json.loads(lines[line_number])
    record["content"] = record["content"].replace('"bench"', '"bencH"', 1)
    lines[line_number] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    out.write_text("\n".join(lines), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-python-"))
    export, tampered = work / "export.ndjson", work / "tampered.ndjson"
    build_export(export, args.records)
    tamper(export, tampered, args.records // 2)
    rows = []
    for _ in range(args.rounds):  # interleaved, so the machine's drift lands on both alike
        base = baseline_seconds(export)
        seconds, ok, failed = python_verify(export)
        rows.append((base, seconds, ok, failed))
    base = min(r[0] for r in rows)
    verify = min(r[1] for r in rows)
    node_seconds, node_code, node_failed = ledger_verify(export)
    _, t_ok, t_failed = python_verify(tampered)
    _, t_code, t_node_failed = ledger_verify(tampered)
    ratio = base / verify
    same = (all(r[2] for r in rows) and node_code == 0) and (not t_ok and t_code == 1 and set(t_failed) == set(t_node_failed))
    size = export.stat().st_size / 1e6
    report = "\n".join([
        f"# Python verifier, {args.records} records ({size:.1f} MB), {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        "| measure | value |", "|---|---|",
        f"| hashlib baseline (sha256 of each content and canonical entry), best of {args.rounds} | {base:.3f} s ({args.records / base:,.0f} rec/s) |",
        f"| Python verifier (`verify_source`, in process, reading included), best of {args.rounds} | {verify:.3f} s ({args.records / verify:,.0f} rec/s) |",
        f"| ratio (baseline time / verifier time), goal >= {GOAL} | {ratio:.3f} ({'yes' if ratio >= GOAL else 'NO'}) |",
        f"| `ledger verify` (child process, wall clock) | {node_seconds:.2f} s, exit {node_code} |",
        f"| verdicts, intact export | Python {'PASS' if rows[0][2] else 'FAIL'}, ledger verify {'PASS' if node_code == 0 else 'FAIL'} |",
        f"| verdicts, one content byte changed | Python FAIL {sorted(t_failed)}, ledger verify exit {t_code} {sorted(t_node_failed)} |",
        f"| same verdicts | {'yes' if same else 'NO'} |",
    ])
    print(report)
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / f"python-verify-{datetime.now(timezone.utc):%Y-%m-%d}.md").write_text(report + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
