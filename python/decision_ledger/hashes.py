"""canon_v1 §3-4: the content hash and the chain entry / chain hash."""
from __future__ import annotations

import hashlib
from typing import Any, Mapping

from .canon import canonical_bytes

ZERO_HASH = "0" * 64


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(content: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_bytes(content))


def chain_entry(
    *,
    agent: str,
    seq: int,
    record_id: str,
    record_type: str,
    recorded_at: str,
    content_hash: str,
    prev_hash: str,
    signature: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "canon": "canon_v1",
        "agent": agent,
        "seq": str(seq),
        "id": record_id,
        "type": record_type,
        "recorded_at": recorded_at,
        "content_hash": content_hash,
        "prev_hash": prev_hash,
    }
    if signature is not None:
        entry["signature"] = dict(signature)
    return entry


def chain_hash(entry: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_bytes(entry))
