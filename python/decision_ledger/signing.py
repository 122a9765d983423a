"""Ed25519 through the optional `cryptography` package (pip extra `signing`, Debian
python3-cryptography); a clear error when it is missing. Keys travel as base64url without padding."""
from __future__ import annotations

import base64
from typing import Any


class MissingCryptography(ImportError):
    def __init__(self) -> None:
        super().__init__(
            "Ed25519 signing and signature checks need the `cryptography` package: "
            "pip install 'decision-ledger[signing]' (Debian: apt-get install python3-cryptography)"
        )


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:
        raise MissingCryptography() from exc
    return ed25519


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding: any other spelling of bytes is refused."""
    if not isinstance(text, str) or "=" in text or len(text) % 4 == 1:
        raise ValueError("not base64url without padding")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        raise ValueError("not base64url without padding (non-canonical spelling)")
    return data


def load_public_key(public_key: bytes) -> Any:
    """An Ed25519 public key object, to verify many signatures under one key. ValueError if malformed."""
    return _ed25519().Ed25519PublicKey.from_public_bytes(public_key)


def verify_with(key: Any, signature: bytes, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def verify_ed25519(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        key = load_public_key(public_key)
    except ValueError:
        return False
    return verify_with(key, signature, message)


class SigningKey:
    """An agent's Ed25519 key: sign the canon_v1 payload locally, register `public_key_b64url`."""

    def __init__(self, seed: bytes) -> None:
        ed25519 = _ed25519()
        self._key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        self.seed = seed

    @classmethod
    def generate(cls) -> "SigningKey":
        import os

        return cls(os.urandom(32))

    @property
    def public_key(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_key_b64url(self) -> str:
        return b64url_encode(self.public_key)

    def sign(self, payload: bytes) -> str:
        """The base64url (no padding) Ed25519 signature over the payload bytes."""
        return b64url_encode(self._key.sign(payload))
