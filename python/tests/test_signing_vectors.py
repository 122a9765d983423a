"""test/vectors/signing: signed decisions (payload, hash, Ed25519 signature) and public-key checks."""
from __future__ import annotations

from typing import Any

import pytest
from conftest import load_vectors

from decision_ledger import canonical_bytes, content_hash, decision_content, read_json
from decision_ledger.decision import parse_rfc3339
from decision_ledger.keys import PublicKeyError, check_public_key
from decision_ledger.signing import SigningKey, b64url_decode, verify_ed25519

SIGNED = load_vectors("signing/signed-decisions.json")
KEYPAIR = load_vectors("canon_v1/keypair.json")
PUBLIC_KEYS = load_vectors("signing/public-keys.json")


@pytest.mark.parametrize("vector", SIGNED["vectors"], ids=lambda v: v["name"])
def test_signed_decision(vector: dict[str, Any]) -> None:
    fields = read_json(vector["assertion_request"])
    nonce = fields.pop("nonce")
    assert nonce == vector["nonce"]
    content = decision_content(fields, agent=SIGNED["agent"], nonce=nonce,
                               now_ms=int(parse_rfc3339(SIGNED["now"]) * 1000))
    payload = canonical_bytes(content)
    assert payload.decode("utf-8") == vector["payload"]
    assert content_hash(content) == vector["content_hash"]
    key = SigningKey(bytes.fromhex(KEYPAIR["seed_hex"]))
    assert key.public_key_b64url == KEYPAIR["public_key_b64url"]
    assert key.sign(payload) == vector["signature"]  # Ed25519 is deterministic
    public = bytes.fromhex(KEYPAIR["public_key_hex"])
    assert verify_ed25519(public, b64url_decode(vector["signature"]), payload)
    assert not verify_ed25519(public, b64url_decode(vector["signature"]), payload + b" ")
    request = read_json(vector["decision_request"])
    assert request["signature"]["signature"] == vector["signature"]
    assert canonical_bytes(decision_content(request, agent=SIGNED["agent"], nonce=nonce)) == payload


@pytest.mark.parametrize("vector", PUBLIC_KEYS["rejected"], ids=lambda v: v["name"])
def test_public_key_rejected(vector: dict[str, Any]) -> None:
    with pytest.raises(PublicKeyError) as caught:
        check_public_key(vector["public_key"])
    assert vector["message_contains"] in str(caught.value)


@pytest.mark.parametrize("vector", PUBLIC_KEYS["accepted"], ids=lambda v: v["name"])
def test_public_key_accepted(vector: dict[str, Any]) -> None:
    assert len(check_public_key(vector["public_key"])) == 32
