"""`python -m decision_ledger verify <url|file> [--vkey <vkey|file>]`: the checks of `ledger verify`
on an export, a chain or a proof bundle; exit 0 pass, 1 a check failed, 2 unusable input."""
from __future__ import annotations

import argparse
import sys
import time

from .verify import UnusableInput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decision_ledger")
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="verify an export (file or URL), a chain URL or a proof bundle")
    verify.add_argument("source")
    verify.add_argument("--vkey", help="the global log's vkey (text or file); default: published on /transparency")
    verify.add_argument("--pin", action="append", default=[], metavar="CHECKPOINT_FILE",
                        help="a log checkpoint saved earlier that the proof bundle's log must extend (repeatable)")
    args = parser.parse_args(argv)
    from .sources import read_pins, verify_source

    started = time.perf_counter()
    try:
        report = verify_source(args.source, args.vkey, read_pins(args.pin))
    except UnusableInput as exc:
        print(f"verdict: UNUSABLE INPUT: {exc}")
        return 2
    lines = report.lines()
    seconds = time.perf_counter() - started
    lines.insert(-1, f"time: {report.records} records in {seconds:.2f} s")
    print("\n".join(lines))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
