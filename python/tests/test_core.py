"""The clients' shared core without a network: request bytes, retry decisions, error reading."""
from __future__ import annotations

from decimal import Decimal

import pytest

from decision_ledger import LedgerValidationError, RetryPolicy, read_json
from decision_ledger._core import (
    Attempts, Config, HttpResponse, build_request, decision_body, decision_payload, fields_text,
)
from decision_ledger.note import parse_vkey

POLICY = RetryPolicy(max_attempts=3, base_delay=0.1, max_delay=0.4, max_retry_after=5)


def error(status: int, code: str, headers: dict[str, str] | None = None) -> HttpResponse:
    body = b'{"error":{"type":"t","code":"%s","message":"m","param":"p","request_id":"req_1"}}' % code.encode()
    return HttpResponse(status, headers or {}, body)


def test_retry_decisions() -> None:
    attempts = Attempts(POLICY, "idem_1")
    attempts.start()
    assert attempts.answered(error(503, "internal_error")).delay is not None
    attempts.start()
    assert attempts.answered(error(409, "idempotency_request_in_flight")).delay is not None
    attempts.start()
    last = attempts.answered(error(503, "internal_error"))
    assert last.error is not None and last.error.attempts == 3 and last.error.idempotency_key == "idem_1"
    for status, code in ((400, "invalid_request"), (409, "idempotency_key_reused"), (401, "invalid_api_key")):
        fresh = Attempts(POLICY)
        fresh.start()
        step = fresh.answered(error(status, code))
        assert step.error is not None and (step.error.code, step.error.param, step.error.request_id) == (code, "p", "req_1")


def test_retry_after() -> None:
    attempts = Attempts(POLICY)
    attempts.start()
    assert attempts.answered(error(429, "rate_limit_exceeded", {"retry-after": "2"})).delay == 2.0
    attempts.start()
    step = attempts.answered(error(429, "rate_limit_exceeded", {"retry-after": "60"}))
    assert step.error is not None and step.error.retry_after == 60.0  # longer than max_retry_after: give up


def test_backoff_is_bounded_with_jitter() -> None:
    for attempt in range(1, 8):
        d = min(POLICY.max_delay, POLICY.base_delay * 2 ** (attempt - 1))
        assert d / 2 <= POLICY.backoff(attempt) <= d


def test_unexpected_body_is_typed() -> None:
    attempts = Attempts(POLICY)
    attempts.start()
    step = attempts.answered(HttpResponse(418, {}, b"<html>"))
    assert step.error is not None and step.error.code == "unexpected_response" and step.error.status == 418


def test_network_failure_retries_then_gives_up() -> None:
    attempts = Attempts(RetryPolicy(max_attempts=2, base_delay=0.01))
    attempts.start()
    assert attempts.failed(ConnectionResetError()).delay is not None
    attempts.start()
    step = attempts.failed(TimeoutError(), timeout=True)
    assert step.error is not None and step.error.code == "timeout" and step.error.status == 0


def test_request_building() -> None:
    config = Config("http://h:1/", "dl_live_x")
    assert config.base_url == "http://h:1/v1"
    request = build_request(config, "GET", "/ledger", query={"include_demo": True, "limit": 5, "cursor": None})
    assert request.url == "http://h:1/v1/ledger?include_demo=true&limit=5"
    assert request.headers["authorization"] == "Bearer dl_live_x"
    assert "authorization" not in build_request(config, "GET", "/ledger", auth=False).headers
    with pytest.raises(LedgerValidationError):
        build_request(Config("http://h:1"), "POST", "/decisions")


def test_decimals_keep_their_text() -> None:
    text = fields_text({"symbol": "A", "action": "BUY", "quantity": Decimal("1.50"), "metadata": {"x": 0.1}})
    assert text == '{"symbol":"A","action":"BUY","quantity":1.50,"metadata":{"x":0.1}}'
    assert fields_text(read_json(text)) == text  # numbers read as text are written back as numbers
    payload, _ = decision_payload("bot", read_json(text))
    assert b'"quantity":"1.5"' in payload and b'"x":"0.1"' in payload


def test_local_refusal_names_the_param() -> None:
    with pytest.raises(LedgerValidationError) as caught:
        decision_body({"symbol": "A", "action": "BUY", "metadata": {"a": [Decimal("1e999")]}}, None, "idem_12345678")
    assert caught.value.param == "metadata.a.0"
    with pytest.raises(LedgerValidationError) as caught:
        decision_body({"symbol": "A", "action": "JUMP"}, None, "idem_12345678")
    assert caught.value.param == "action"
    with pytest.raises(LedgerValidationError):
        fields_text({"symbol": "A", "action": "BUY", "quantity": float("inf")})


def test_vkey_whose_base64_holds_a_plus() -> None:
    verifier = parse_vkey("ledger.test/log+ff15005b+AQHF5WkpJ85N2QuqzzWvZb+IB2QnupprOMw9+BDMXXyc")
    assert verifier.name == "ledger.test/log" and len(verifier.public_key) == 32


def test_default_policy_is_the_documented_one() -> None:
    policy = RetryPolicy()  # docs/python.md: 5 attempts, 0.2 s doubling, capped at 5 s, Retry-After up to 60 s
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.max_retry_after) == (5, 0.2, 5.0, 60.0)
    assert Config("http://h").timeout == 30.0
