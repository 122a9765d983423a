"""canon_v1 §2: Decimal text -> its normalised form, without ever going through a float."""
from __future__ import annotations

import re

MAX_LENGTH = 64
_GRAMMAR = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")


class DecimalTextError(ValueError):
    """kind is "grammar" (not the JSON number grammar) or "too_long" (over 64 characters)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(f"{kind}: {text[:80]!r}")
        self.kind = kind


def normalise_decimal(text: str) -> str:
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise DecimalTextError("grammar", text)
    negative, whole, fraction, exponent = match.groups()
    digits = whole + (fraction or "")
    stripped = digits.lstrip("0")
    # point: how many digits of `stripped` stand before the decimal point (may be <= 0 or > len).
    point = len(whole) - (len(digits) - len(stripped)) + _exponent(exponent, bool(stripped.rstrip("0")))
    digits = stripped.rstrip("0")
    if not digits:
        return "0"
    size = _length(len(digits), point) + (1 if negative else 0)
    if size > MAX_LENGTH:
        raise DecimalTextError("too_long", text)
    if point <= 0:
        body = "0." + "0" * -point + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    return ("-" if negative else "") + body


def _exponent(text: str | None, nonzero: bool) -> int:
    if text is None:
        return 0
    sign = -1 if text.startswith("-") else 1
    magnitude = text.lstrip("+-").lstrip("0") or "0"
    if len(magnitude) > 12:
        # Far beyond 64 characters either way; a zero value ignores its exponent.
        return sign * 10**12 if nonzero else 0
    return sign * int(magnitude)


def _length(count: int, point: int) -> int:
    if point <= 0:
        return 2 - point + count
    if point >= count:
        return point
    return count + 1
