"""The whole global log from its C2SP tlog-tiles (docs/log.md "Verifying"): a URL prefix
(`<base_url>/log`) or a directory holding the same paths. Every entry bundle hashes to the level-0
tiles, every higher tile to the tiles below, the whole to the checkpoint's root; the checkpoint's
signature under the vkey; every agent's entries in chain order; each pinned checkpoint a prefix."""
from __future__ import annotations

import hashlib
import json
from typing import Callable

from .canon import JsonNumber, canonical_text_of_read
from .hashes import ZERO_HASH
from .merkle import leaf_hash, root_hash
from .note import Checkpoint, NoteError, Verifier, open_checkpoint
from .verify import Failure, Report, UnusableInput

TILE_WIDTH = 256
Reader = Callable[[str], "bytes | None"]
_ENTRY_READER = json.JSONDecoder(parse_float=JsonNumber, parse_int=JsonNumber)


def tile_index_path(n: int) -> str:
    """`N` in 3-digit groups, all but the last prefixed with `x` (1234067 -> x001/x234/067)."""
    digits = str(n)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    return "/".join([f"x{g}" for g in groups[:-1]] + [groups[-1]])


def tile_path(level: int | str, n: int, width: int) -> str:
    return f"tile/{level}/{tile_index_path(n)}" + (f".p/{width}" if width < TILE_WIDTH else "")


def tiles_at(count: int) -> list[tuple[int, int]]:
    """(index, width) of the tiles holding `count` hashes or entries: full ones, then a partial one."""
    full, partial = divmod(count, TILE_WIDTH)
    return [(n, TILE_WIDTH) for n in range(full)] + ([(full, partial)] if partial else [])


def parse_entry_bundle(data: bytes, width: int) -> list[bytes]:
    """W entries, each a big-endian uint16 length then the bytes, and nothing after them."""
    entries, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise ValueError("a length is cut off")
        size = int.from_bytes(data[at : at + 2], "big")
        entries.append(data[at + 2 : at + 2 + size])
        at += 2 + size
        if at > len(data):
            raise ValueError("an entry is cut off")
    if len(entries) != width:
        raise ValueError(f"holds {len(entries)} entries, expected {width}")
    return entries


class _Failures:
    def __init__(self) -> None:
        self.items: list[Failure] = []
        self.count = 0

    def add(self, name: str, where: str, detail: str) -> None:
        self.count += 1
        if len(self.items) < 100:
            self.items.append(Failure(name, where, detail))


def verify_log(read: Reader, origin: str, vkey: Verifier | None, vkey_from: str, pins: list[str]) -> Report:
    note_bytes = read("checkpoint")
    if note_bytes is None:
        raise UnusableInput(f"{origin}: no checkpoint (an empty log publishes none)")
    note = note_bytes.decode("utf-8")
    report = Report([f"global log (log_v1) from {origin}"], subject="the global log", log=True)
    try:
        checkpoint = open_checkpoint(note, vkey)
        report.check("checkpoint", True if vkey else None,
                     f"signed by {vkey.name} (vkey {vkey_from})" if vkey else "signature not checked: no vkey given")
    except NoteError as exc:
        report.check("checkpoint", False, "the checkpoint does not verify", [Failure("checkpoint", "checkpoint", str(exc))])
        try:
            checkpoint = open_checkpoint(note, None)
        except NoteError as exc2:
            raise UnusableInput(f"{origin}: the checkpoint is unreadable: {exc2}") from exc2
    leaves = _entries(read, checkpoint.size, report)
    report.records = len(leaves)
    _tiles(read, leaves, report)
    ok = len(leaves) == checkpoint.size and root_hash(leaves) == checkpoint.root
    report.check("root", ok, f"the {checkpoint.size} entries give the checkpoint's root" if ok
                 else f"the entries do not give the checkpoint's root (size {checkpoint.size})")
    for index, pin in enumerate(pins, start=1):
        _pin(report, pin, f"pinned checkpoint {index}", checkpoint, leaves, vkey)
    return report


def _entries(read: Reader, size: int, report: Report) -> list[bytes]:
    leaves: list[bytes] = []
    bundles, order = _Failures(), _Failures()
    chains: dict[str, tuple[int, str]] = {}
    for n, width in tiles_at(size):
        path = tile_path("entries", n, width)
        data = read(path)
        first = n * TILE_WIDTH
        try:
            if data is None:
                raise ValueError("missing")
            entries = parse_entry_bundle(data, width)
        except ValueError as exc:
            bundles.add("entry_bundles", f"{path} (log indexes {first}-{first + width - 1})", str(exc))
            leaves.extend(b"" for _ in range(width))  # keeps later indexes in place; the root will not match
            continue
        for i, entry in enumerate(entries):
            leaves.append(leaf_hash(entry))
            _chain_order(entry, first + i, chains, order)
    report.check("entry_bundles", bundles.count == 0, f"{len(leaves)} entries read from {len(tiles_at(size))} bundle(s)", bundles.items)
    report.check("chain_order", order.count == 0, f"{len(chains)} agent chain(s) follow each other in the log in chain order", order.items)
    return leaves


def _chain_order(data: bytes, index: int, chains: dict[str, tuple[int, str]], failures: _Failures) -> None:
    try:
        text = data.decode("utf-8")
        entry = _ENTRY_READER.decode(text)
        agent, seq, prev = entry["agent"], int(entry["seq"]), entry["prev_hash"]
    except (ValueError, KeyError, TypeError):
        failures.add("chain_order", f"log index {index}", "the entry is not a UTF-8 JSON chain entry")
        return
    where = f"log index {index} ({agent} seq {seq})"
    before_seq, before_hash = chains.get(agent, (0, ZERO_HASH))
    try:
        canonical = canonical_text_of_read(entry) == text
    except TypeError:
        canonical = False
    if not canonical:
        failures.add("chain_order", where, "the entry is not in canon_v1 form")
    elif seq != before_seq + 1:
        failures.add("chain_order", where, f"the agent's previous entry in the log is seq {before_seq}: the log does not keep chain order")
    elif prev != before_hash:
        failures.add("chain_order", where, f"prev_hash is not the chain_hash of the agent's previous entry in the log ({before_hash})")
    chains[agent] = (seq, hashlib.sha256(data).hexdigest())


def _tiles(read: Reader, leaves: list[bytes], report: Report) -> None:
    failures, count, level, hashes = _Failures(), 0, 0, leaves
    while hashes:
        for n, width in tiles_at(len(hashes)):
            count += 1
            path = tile_path(level, n, width)
            data = read(path)
            if data is None or len(data) != 32 * width:
                failures.add("tiles", path, "missing" if data is None else f"{len(data)} bytes, expected {32 * width}")
                continue
            for i in range(width):
                if data[32 * i : 32 * i + 32] != hashes[n * TILE_WIDTH + i]:
                    k = n * TILE_WIDTH + i
                    failures.add("tiles", f"{path} hash {i}", f"is not the leaf hash of log index {k}'s entry" if level == 0
                                 else f"is not the head of tile {level - 1}/{k} computed from the entries")
        hashes = [root_hash(hashes[i : i + TILE_WIDTH]) for i in range(0, len(hashes) - TILE_WIDTH + 1, TILE_WIDTH)]
        level += 1
    report.check("tiles", failures.count == 0, f"{count} hash tile(s) match the entries", failures.items)


def _pin(report: Report, note: str, where: str, latest: Checkpoint, leaves: list[bytes], vkey: Verifier | None) -> None:
    failures: list[Failure] = []
    try:
        pinned = open_checkpoint(note, vkey)
    except NoteError as exc:
        report.check("pinned_checkpoint", False, f"{where} does not verify", [Failure("pinned_checkpoint", where, str(exc))])
        return
    if pinned.origin != latest.origin:
        failures.append(Failure("pinned_checkpoint", where, f"origin {pinned.origin} is not the log's {latest.origin}"))
    elif pinned.size > latest.size:
        failures.append(Failure("pinned_checkpoint", where, f"size {pinned.size} is larger than the log's {latest.size}: the log shrank"))
    elif root_hash(leaves[: pinned.size]) != pinned.root:
        failures.append(Failure("pinned_checkpoint", where, f"the log's first {pinned.size} entries do not give the pinned root: history was rewritten"))
    report.check("pinned_checkpoint", not failures,
                 f"{where} (size {pinned.size}) is a prefix of the log (size {latest.size})", failures)
