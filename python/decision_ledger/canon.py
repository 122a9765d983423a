"""canon_v1 §1-2: the strict JSON reader (numbers kept as text) and the canonical serialiser.

The reader is the standard library's JSON scanner with hooks: numbers come back as `JsonNumber`
(their exact text), then one walk rejects what canon_v1 refuses (duplicate keys, lone surrogates,
nesting deeper than 64) and names the offending place with a dotted path.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable

from .decimal_text import DecimalTextError, normalise_decimal

MAX_DEPTH = 64
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonNumber(str):
    """A JSON number exactly as written in the text (never converted to a float)."""


class CanonError(ValueError):
    """stage: "read" (the text is not strict JSON) or "normalise" (a number is not a valid Decimal)."""

    def __init__(self, stage: str, path: str, message: str) -> None:
        super().__init__(f"{message} at {path or '(top)'}")
        self.stage = stage
        self.path = path
        self.message = message


class _Object(dict):  # type: ignore[type-arg]
    duplicate: str | None = None


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                obj.duplicate = key
                break
            seen.add(key)
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_float=JsonNumber, parse_int=JsonNumber, parse_constant=_constant
)


def read_json(text: str | bytes) -> Any:
    """Reads JSON strictly; numbers stay `JsonNumber` text. Raises CanonError(stage="read")."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CanonError("read", "", "not UTF-8") from exc
    try:
        value = _DECODER.decode(text)
    except RecursionError as exc:
        raise CanonError("read", "", f"nesting deeper than {MAX_DEPTH}") from exc
    except ValueError as exc:
        raise CanonError("read", "", f"not JSON: {exc}") from exc
    _check(value, [], 1)
    return value


def _path(parts: Iterable[str | int]) -> str:
    return ".".join(_LONE_SURROGATE.sub("\ufffd", p) if isinstance(p, str) else str(p) for p in parts)


def _check(value: Any, path: list[str | int], depth: int) -> None:
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise CanonError("read", _path(path), f"nesting deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        for key, item in value.items():
            if _LONE_SURROGATE.search(key) and not _well_formed(key):
                raise CanonError("read", _path(path + [key]), "lone surrogate in a key")
            _check(item, path + [key], depth + 1)
        duplicate = getattr(value, "duplicate", None)
        if duplicate is not None:
            raise CanonError("read", _path(path + [duplicate]), "duplicate key")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, path + [index], depth + 1)
    elif isinstance(value, str) and not isinstance(value, JsonNumber):
        if _LONE_SURROGATE.search(value) and not _well_formed(value):
            raise CanonError("read", _path(path), "lone surrogate in a string")


def _well_formed(text: str) -> bool:
    # The JSON scanner joins escaped pairs into one code point; any surrogate left is lone.
    return _LONE_SURROGATE.search(text) is None


def normalise_numbers(value: Any, path: tuple[str | int, ...] = ()) -> Any:
    """Every JsonNumber becomes its normalised decimal string (§2). Raises CanonError("normalise")."""
    if isinstance(value, JsonNumber):
        try:
            return normalise_decimal(str(value))
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
        keys = sorted(value, key=_utf16_key) if not all(k.isascii() for k in value) else sorted(value)
        return {k: _ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    if isinstance(value, JsonNumber) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        raise TypeError("canon_v1 holds no JSON numbers: normalise them to decimal strings first")
    return value


def canonical_text(value: Any) -> str:
    """canon_v1(V) as text: RFC 8785 member order (UTF-16 code units), no whitespace, and strings
    escaped as ECMAScript JSON.stringify does (the standard encoder with ensure_ascii=False writes
    exactly `\\"`, `\\\\`, `\\b\\t\\n\\f\\r` and lower-case `\\u00xx` for the other controls)."""
    return json.dumps(_ordered(value), ensure_ascii=False, separators=(",", ":"), check_circular=False)


def canonical_bytes(value: Any) -> bytes:
    return canonical_text(value).encode("utf-8")


def canonicalise_json(text: str | bytes) -> bytes:
    """Strict read, every number normalised, canonical bytes: canonical.json's pipeline."""
    return canonical_bytes(normalise_numbers(read_json(text)))
