"""`python -m decision_ledger verify <url|file> [--vkey <vkey|file>]`: the checks of `ledger verify`
on an export, a chain or a proof bundle; with `--performance <agent URL>`, whether the agent's
performance reports and their inputs are bound to the agent (performance.py; the figures are not
computed again: `ledger verify --performance` does that). Exit 0 pass, 1 a check failed, 2 unusable
input (a bound against the server passed included: --timeout, --idle-timeout, --max-bytes,
--max-json-bytes)."""
from __future__ import annotations

import argparse
import re
import sys
import time

from .sources import Bounds
from .verify import UnusableInput


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError("a number of seconds above 0, at most 86400")
    return value


_UNITS = {"": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}


def _byte_count(text: str) -> int:
    match = re.fullmatch(r"([0-9]{1,12})(KiB|MiB|GiB)?", text)
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError("a byte count above 0, e.g. 1048576, 64MiB or 2GiB")
    return int(match.group(1)) * _UNITS[match.group(2) or ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decision_ledger")
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="verify an export (file or URL), a chain URL or a proof bundle")
    verify.add_argument("source")
    verify.add_argument("--performance", action="store_true",
                        help="the source is an agent's URL (<site>/agents/<handle> or <api>/v1/agents/<handle>): check that its "
                             "performance reports' inputs are the agent's own (labels, and each record against its chain and the "
                             "log); the figures are not computed again (`ledger verify --performance` does that)")
    verify.add_argument("--vkey", help="the global log's vkey (text or file); default: published on /transparency")
    verify.add_argument("--pin", action="append", default=[], metavar="CHECKPOINT_FILE",
                        help="a log checkpoint saved earlier that the proof bundle's log must extend (repeatable)")
    defaults = Bounds()
    verify.add_argument("--timeout", type=_positive, default=defaults.timeout, metavar="SECONDS",
                        help=f"the whole run against a server: past it, exit 2 (default {defaults.timeout:g})")
    verify.add_argument("--idle-timeout", type=_positive, default=defaults.idle_timeout, metavar="SECONDS",
                        help=f"the longest wait for a server's next byte: past it, exit 2 (default {defaults.idle_timeout:g})")
    verify.add_argument("--max-bytes", type=_byte_count, default=defaults.max_bytes, metavar="BYTES",
                        help="the most one streamed answer (an NDJSON export) may send: past it, exit 2 (default 4GiB)")
    verify.add_argument("--max-json-bytes", type=_byte_count, default=defaults.max_json_bytes, metavar="BYTES",
                        help="the most one JSON value held whole may take (a document, or a line of an export): past it, exit 2 (default 64MiB)")
    args = parser.parse_args(argv)
    from .sources import read_pins, set_bounds, verify_source

    set_bounds(Bounds(args.timeout, args.idle_timeout, args.max_bytes, args.max_json_bytes))
    started = time.perf_counter()
    try:
        if args.performance:
            return _performance(args.source)
        report = verify_source(args.source, args.vkey, read_pins(args.pin))
    except UnusableInput as exc:
        print(f"verdict: UNUSABLE INPUT: {exc}")
        return 2
    except RecursionError:
        # A last guard: every reader checks the nesting first (verify.MAX_JSON_NESTING).
        print("verdict: UNUSABLE INPUT: the input nests JSON deeper than this Python can read")
        return 2
    lines = report.lines()
    seconds = time.perf_counter() - started
    lines.insert(-1, f"time: {report.records} records in {seconds:.2f} s")
    print("\n".join(lines))
    return 0 if report.ok else 1


def _performance(source: str) -> int:
    from .performance import verify_performance

    code, lines = verify_performance(source)
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
