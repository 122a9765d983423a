"""Checks an Ed25519 public key as POST /v1/keys wants it (test/vectors/signing/public-keys.json):
raw 32 bytes, base64url without padding, a canonical point of the prime-order subgroup. Pure
Python point arithmetic (RFC 8032 §5.1), so it runs without `cryptography`."""
from __future__ import annotations

import re

from .signing import b64url_decode

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
_SQRT_M1 = pow(2, (P - 1) // 4, P)
Point = tuple[int, int, int, int]
IDENTITY: Point = (0, 1, 1, 0)


class PublicKeyError(ValueError):
    pass


def _add(a: Point, b: Point) -> Point:
    p1 = (a[1] - a[0]) * (b[1] - b[0]) % P
    p2 = (a[1] + a[0]) * (b[1] + b[0]) % P
    c = 2 * a[3] * b[3] * D % P
    d = 2 * a[2] * b[2] % P
    e, f, g, h = p2 - p1, d - c, d + c, p2 + p1
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(scalar: int, point: Point) -> Point:
    result = IDENTITY
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def _is_identity(point: Point) -> bool:
    return point[0] % P == 0 and (point[1] - point[2]) % P == 0


def _decode(raw: bytes) -> Point | None:
    value = int.from_bytes(raw, "little")
    y, sign = value & ((1 << 255) - 1), value >> 255
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:
        return None if sign else (0, y, 1, 0)
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * _SQRT_M1 % P
    if (x * x - x2) % P:
        return None
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


def check_public_key(text: str) -> bytes:
    """The 32 key bytes, or PublicKeyError saying what the text is instead."""
    if text.lstrip().startswith("-----BEGIN"):
        raise PublicKeyError("a PEM block is not accepted: send the raw 32-byte key, base64url")
    if re.fullmatch(r"[0-9a-fA-F]{128}", text):
        raise PublicKeyError("this looks like the hex of a 64-byte private key: never send a private key")
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise PublicKeyError("hex is not accepted: send the 32 key bytes as base64url")
    try:
        raw = b64url_decode(text)
    except ValueError as exc:
        raise PublicKeyError("must be base64url without padding") from exc
    if len(raw) in (48, 64):
        raise PublicKeyError(f"{len(raw)} bytes: this is a private key; never send a private key")
    if len(raw) == 44:
        raise PublicKeyError("44 bytes: an SPKI DER public key; send the raw 32 bytes")
    if len(raw) != 32:
        raise PublicKeyError("an Ed25519 public key is exactly 32 bytes")
    point = _decode(raw)
    if point is None:
        raise PublicKeyError("not the canonical encoding of a point on the curve")
    if _is_identity(_mul(8, point)):
        raise PublicKeyError("a small-order point: anyone could forge its signatures")
    if not _is_identity(_mul(L, point)):
        raise PublicKeyError("not in the prime-order subgroup")
    return raw
