"""The decision content document (canon_v1 §3 with ledger-interface 2.2's field rules).

`decision_content` turns the fields of a decision request (read by `canon.read_json`, numbers as
text) into the content document whose canon_v1 bytes are hashed and signed.
"""
from __future__ import annotations

import calendar
import re
from fractions import Fraction
from typing import Any, Mapping

from .canon import CanonError, JsonNumber, normalise_numbers
from .decimal_text import DecimalTextError, normalise_decimal

ACTIONS = ("BUY", "SELL", "HOLD", "INCREASE", "REDUCE", "CLOSE")
ASSET_CLASSES = ("US_EQUITY", "CRYPTO", "ETF", "PREDICTION_MARKET", "PERPETUAL", "OTHER")
FIELDS = (
    "symbol", "action", "asset_class", "target_allocation_pct", "quantity", "notional", "currency",
    "confidence", "time_horizon", "thesis", "metadata", "occurred_at", "signature",
)
DECIMALS = ("target_allocation_pct", "quantity", "notional", "confidence")
RANGES = {"target_allocation_pct": (Fraction(0), Fraction(100)), "confidence": (Fraction(0), Fraction(1))}
MAX_LENGTHS = {"symbol": 20, "time_horizon": 120, "thesis": 8000}
SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


class ContentError(ValueError):
    """A field breaks a rule of ledger-interface 2.2; `param` names it (a dotted path in metadata)."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


def decision_content(
    fields: Mapping[str, Any], *, agent: str, now_ms: int | None = None, nonce: str | None = None
) -> dict[str, Any]:
    """The content document. `now_ms` (the service clock, ms since the epoch) enables the
    occurred_at window check; a verifier re-hashing a stored record leaves it None."""
    for name in fields:
        if name not in FIELDS:
            raise ContentError(name, "unknown field")
    content: dict[str, Any] = {"canon": "canon_v1", "type": "decision", "agent": agent}
    for name in ("symbol", "action"):
        if name not in fields:
            raise ContentError(name, "required")
    for name, value in fields.items():
        if name == "signature":
            continue
        content[name] = _field(name, value, now_ms)
    content.setdefault("asset_class", "US_EQUITY")
    content.setdefault("currency", "USD")
    if nonce is not None:
        content["nonce"] = nonce
    return content


def _field(name: str, value: Any, now_ms: int | None) -> Any:
    if name in DECIMALS:
        return _decimal(name, value)
    if name == "metadata":
        if not isinstance(value, dict):
            raise ContentError(name, "must be an object")
        try:
            return normalise_numbers(value, ("metadata",))
        except CanonError as exc:
            raise ContentError(exc.path, exc.message) from exc
    if not isinstance(value, str):
        raise ContentError(name, "must be a string")
    if name == "action" and value not in ACTIONS:
        raise ContentError(name, f"must be one of {', '.join(ACTIONS)}")
    if name == "asset_class" and value not in ASSET_CLASSES:
        raise ContentError(name, f"must be one of {', '.join(ASSET_CLASSES)}")
    if name == "currency" and len(value) != 3:
        raise ContentError(name, "must be exactly 3 characters")
    if name in MAX_LENGTHS and len(value) > MAX_LENGTHS[name]:
        raise ContentError(name, f"at most {MAX_LENGTHS[name]} characters")
    if name == "occurred_at":
        _check_occurred_at(value, now_ms)
    return value


def _decimal(name: str, value: Any) -> str:
    if not isinstance(value, (str, JsonNumber)):  # bool, None, objects are not Decimals
        raise ContentError(name, "must be a Decimal (a JSON number or a decimal string)")
    try:
        text = normalise_decimal(str(value))
    except DecimalTextError as exc:
        raise ContentError(name, f"not a valid Decimal ({exc.kind})") from exc
    if name in RANGES:
        low, high = RANGES[name]
        if not low <= Fraction(text) <= high:
            raise ContentError(name, f"must be between {low} and {high}")
    return text


def parse_rfc3339(text: str) -> Fraction:
    """Seconds since the epoch, exactly (sub-millisecond digits kept). Raises ValueError."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError("not an RFC 3339 date-time with a time-zone offset")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError("no such date")
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError("no such time")
    offset = match.group(8)
    shift = 0
    if offset not in ("Z", "z"):
        oh, om = int(offset[1:3]), int(offset[4:6])
        if oh > 23 or om > 59:
            raise ValueError("no such offset")
        shift = (oh * 60 + om) * 60 * (1 if offset[0] == "+" else -1)
    whole = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) - shift
    return whole + Fraction(match.group(7) or ".0")


def _check_occurred_at(value: str, now_ms: int | None) -> None:
    try:
        at = parse_rfc3339(value)
    except ValueError as exc:
        raise ContentError("occurred_at", str(exc)) from exc
    if now_ms is None:
        return
    now = Fraction(now_ms, 1000)
    if at > now:
        raise ContentError("occurred_at", "cannot be in the future")
    if at < now - Fraction(SEVEN_DAYS_MS, 1000):
        raise ContentError("occurred_at", "cannot be more than seven days old")
