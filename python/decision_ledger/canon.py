"""canon_v1 §1-2: the strict JSON reader (numbers kept as text) and the canonical serialiser.

The reader is the standard library's JSON scanner with hooks: numbers come back as `JsonNumber`
(their exact text) and duplicate keys are noted. What canon_v1 refuses (duplicate keys, lone
surrogates, nesting deeper than 64) is looked for in the text first (at C speed); only when the
text could hold one does a walk find it and name the offending place with a dotted path.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable

from .decimal_text import DecimalTextError, normalise_decimal

MAX_DEPTH = 64
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class JsonNumber:
    """A JSON number exactly as written in the text (never converted to a float). Not a str, so
    the serialiser cannot write it by mistake: canon_v1 holds decimal strings only."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"JsonNumber({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class CanonError(ValueError):
    """stage: "read" (the text is not strict JSON) or "normalise" (a number is not a valid Decimal)."""

    def __init__(self, stage: str, path: str, message: str) -> None:
        super().__init__(f"{message} at {path or '(top)'}")
        self.stage = stage
        self.path = path
        self.message = message


class _Object(dict):  # type: ignore[type-arg]
    duplicate: str | None = None


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decoder(duplicates: list[str]) -> json.JSONDecoder:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        flagged = _Object(obj)
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                flagged.duplicate = key
                duplicates.append(key)
                break
            seen.add(key)
        return flagged

    return json.JSONDecoder(object_pairs_hook=pairs, parse_float=JsonNumber, parse_int=JsonNumber,
                            parse_constant=_constant)


def read_json(text: str | bytes) -> Any:
    """Reads JSON strictly; numbers stay `JsonNumber` text. Raises CanonError(stage="read")."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CanonError("read", "", "not UTF-8") from exc
    duplicates: list[str] = []
    try:
        value = _decoder(duplicates).decode(text)
    except RecursionError as exc:
        raise CanonError("read", "", f"nesting deeper than {MAX_DEPTH}") from exc
    except ValueError as exc:
        raise CanonError("read", "", f"not JSON: {exc}") from exc
    if duplicates or text.count("[") + text.count("{") > MAX_DEPTH or _may_hold_surrogates(text):
        _check(value, [], 1)
    return value


def _may_hold_surrogates(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None or _SURROGATE_ESCAPE.search(text) is not None


def _path(parts: Iterable[str | int]) -> str:
    return ".".join(_LONE_SURROGATE.sub("\ufffd", p) if isinstance(p, str) else str(p) for p in parts)


def _check(value: Any, path: list[str | int], depth: int) -> None:
    """The walk that names the place of a duplicate key, a lone surrogate or too deep a nesting.
    The JSON scanner joins escaped surrogate pairs into one code point, so any surrogate left is lone."""
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise CanonError("read", _path(path), f"nesting deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        for key, item in value.items():
            if _LONE_SURROGATE.search(key):
                raise CanonError("read", _path(path + [key]), "lone surrogate in a key")
            _check(item, path + [key], depth + 1)
        duplicate = getattr(value, "duplicate", None)
        if duplicate is not None:
            raise CanonError("read", _path(path + [duplicate]), "duplicate key")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, path + [index], depth + 1)
    elif isinstance(value, str) and _LONE_SURROGATE.search(value):
        raise CanonError("read", _path(path), "lone surrogate in a string")


def normalise_numbers(value: Any, path: tuple[str | int, ...] = ()) -> Any:
    """Every JsonNumber becomes its normalised decimal string (§2). Raises CanonError("normalise")."""
    if isinstance(value, JsonNumber):
        try:
            return normalise_decimal(value.text)
        except DecimalTextError as exc:
            raise CanonError("normalise", _path(path), f"decimal {exc.kind}") from exc
    if isinstance(value, dict):
        return {k: normalise_numbers(v, path + (k,)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v, path + (i,)) for i, v in enumerate(value)]
    return value


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _ordered(value[k]) for k in sorted(value, key=_utf16_key)}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise TypeError("canon_v1 holds no JSON numbers: normalise them to decimal strings first")
    return value


def _refuse(value: Any) -> Any:
    raise TypeError(f"canon_v1 holds no JSON numbers ({value}): normalise them to decimal strings first")


def _dumps(value: Any, sort: bool) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort, check_circular=False,
                      default=_refuse)


def canonical_text(value: Any) -> str:
    """canon_v1(V) as text: RFC 8785 member order (UTF-16 code units), no whitespace, and strings
    escaped as ECMAScript JSON.stringify does (the standard encoder with ensure_ascii=False writes
    exactly `\\"`, `\\\\`, `\\b\\t\\n\\f\\r` and lower-case `\\u00xx` for the other controls).
    Refuses numbers (int, float, JsonNumber) with TypeError."""
    return _dumps(_ordered(value), sort=False)


def canonical_text_of_read(value: Any) -> str:
    """canonical_text for a value from read_json or a JSON reader whose numbers are JsonNumber
    (so it holds no int or float): the encoder sorts the keys itself, which is UTF-16 order
    unless a key holds a character beyond U+FFFF; only then are the members ordered here."""
    text = _dumps(value, sort=True)
    return text if _ASTRAL.search(text) is None else canonical_text(value)


def canonical_bytes(value: Any) -> bytes:
    return canonical_text(value).encode("utf-8")


def canonicalise_json(text: str | bytes) -> bytes:
    """Strict read, every number normalised, canonical bytes: canonical.json's pipeline."""
    return canonical_bytes(normalise_numbers(read_json(text)))
