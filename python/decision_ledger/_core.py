"""What the sync and asyncio clients share: building requests (URL, headers, body bytes), the
retry policy, and reading an answer into a value, a retry or a typed error. No I/O here."""
from __future__ import annotations

import json
import random
import urllib.parse
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from .canon import CanonError, JsonNumber, canonical_bytes, read_json
from .decision import ContentError, decision_content
from .errors import LedgerApiError, LedgerError, LedgerNetworkError, LedgerValidationError
from .hashes import sha256_hex
from .signing import SigningKey

USER_AGENT = "decision-ledger-python/0.1.0"
RETRY_STATUSES = (500, 502, 503, 504)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.2
    max_delay: float = 5.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int) -> float:
        """The wait before retry `attempt` (1-based): drawn from [d/2, d], d = base * 2^(attempt-1), capped."""
        d = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return random.uniform(d / 2, d)


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None = None


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Signer:
    """Signs decisions for `agent` with a registered key (`key_id` from POST /v1/keys)."""

    agent: str
    key_id: str
    key: SigningKey


@dataclass
class Step:
    """After one attempt: `value` (done), `delay` (retry after it) or `error` (raise it)."""

    value: HttpResponse | None = None
    delay: float | None = None
    error: LedgerError | None = None


@dataclass
class Config:
    base_url: str
    api_key: str | None = None
    timeout: float = 30.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        base = self.base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"


def build_request(
    config: Config, method: str, path: str, *, query: Mapping[str, Any] | None = None,
    body: bytes | None = None, auth: bool = True, headers: Mapping[str, str] | None = None,
) -> HttpRequest:
    url = config.base_url + path
    params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
    if params:
        url += "?" + urllib.parse.urlencode(params)
    all_headers = {"accept": "application/json", "user-agent": USER_AGENT, **(headers or {})}
    if body is not None:
        all_headers["content-type"] = "application/json"
    if auth:
        if not config.api_key:
            raise LedgerValidationError("this call needs an API key", code="missing_api_key", type="authentication_error")
        all_headers["authorization"] = f"Bearer {config.api_key}"
    return HttpRequest(method, url, all_headers, body)


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _plain(value: Any, numbers: dict[str, str]) -> Any:
    """Python values -> JSON values. A Decimal becomes a JSON number written with its exact text
    (through a placeholder the encoder cannot write otherwise); a float its shortest round-trip
    text (repr), which is what JSON.stringify writes too."""
    if isinstance(value, (Decimal, JsonNumber)):
        if isinstance(value, Decimal) and not value.is_finite():
            raise LedgerValidationError("a Decimal must be finite", code="invalid_request", type="invalid_request_error")
        marker = f"\u0000{_MARK}{len(numbers)}\u0000"
        numbers[json.dumps(marker)] = str(value)
        return marker
    if isinstance(value, Mapping):
        return {str(k): _plain(v, numbers) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, numbers) for v in value]
    return value


_MARK = uuid.uuid4().hex


def fields_text(fields: Mapping[str, Any]) -> str:
    numbers: dict[str, str] = {}
    try:
        text = json.dumps(_plain(fields, numbers), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # NaN or infinity: no Decimal spells them
        raise LedgerValidationError(str(exc), code="invalid_request", type="invalid_request_error") from exc
    for marker, number in numbers.items():
        text = text.replace(marker, number)
    return text


def decision_payload(agent: str, fields: Mapping[str, Any], nonce: str | None = None) -> tuple[bytes, str]:
    """The canon_v1 content document's bytes (what a signer signs) and its content_hash, built
    locally; the service's refusals (except the occurred_at window, its clock's) raise here."""
    try:
        content = decision_content(read_json(fields_text(fields)), agent=agent, nonce=nonce)
    except ContentError as exc:
        raise LedgerValidationError(exc.message, code="invalid_request", type="invalid_request_error", param=exc.param) from exc
    except CanonError as exc:
        raise LedgerValidationError(exc.message, code="invalid_request", type="invalid_request_error", param=exc.path) from exc
    payload = canonical_bytes(content)
    return payload, sha256_hex(payload)


def decision_body(fields: Mapping[str, Any], signer: Signer | None, idempotency_key: str) -> bytes:
    """The request body, the same bytes on every attempt. A signer's nonce is the Idempotency-Key,
    so a retry (even from a later process) rebuilds the same signed body, which the service replays."""
    plain = {k: v for k, v in fields.items() if k != "signature"}
    payload, _ = decision_payload(signer.agent if signer else "-", plain, idempotency_key if signer else None)
    if signer is not None:
        plain["signature"] = {"key_id": signer.key_id, "nonce": idempotency_key, "signature": signer.key.sign(payload)}
    return fields_text(plain).encode("utf-8")


def new_idempotency_key() -> str:
    return "idem_" + uuid.uuid4().hex


def api_error(response: HttpResponse, attempts: int, idempotency_key: str | None) -> LedgerApiError:
    try:
        error = response.json()["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        return LedgerApiError(f"HTTP {response.status}: {response.body[:200]!r}", code="unexpected_response",
                              status=response.status, attempts=attempts, idempotency_key=idempotency_key)
    return LedgerApiError(
        str(error.get("message", "")), code=error["code"], type=str(error.get("type", "api_error")),
        param=error.get("param"), request_id=error.get("request_id") or response.headers.get("x-request-id"),
        status=response.status, retry_after=retry_after(response), attempts=attempts, idempotency_key=idempotency_key,
    )


def retry_after(response: HttpResponse) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class Attempts:
    """The retry decision after each attempt of one call (one Idempotency-Key for a recording)."""

    def __init__(self, policy: RetryPolicy, idempotency_key: str | None = None) -> None:
        self.policy, self.idempotency_key, self.count = policy, idempotency_key, 0

    def start(self) -> None:
        self.count += 1

    def answered(self, response: HttpResponse) -> Step:
        if 200 <= response.status < 300:
            return Step(value=response)
        error = api_error(response, self.count, self.idempotency_key)
        retryable = response.status in RETRY_STATUSES or error.code == "idempotency_request_in_flight"
        if response.status == 429:
            wait = error.retry_after if error.retry_after is not None else self.policy.backoff(self.count)
            if wait > self.policy.max_retry_after:
                return Step(error=error)
            return self._retry(error, wait)
        return self._retry(error, self.policy.backoff(self.count)) if retryable else Step(error=error)

    def failed(self, exc: BaseException, timeout: bool = False) -> Step:
        error = LedgerNetworkError(f"no answer: {exc}", code="timeout" if timeout else "network_error",
                                   attempts=self.count, idempotency_key=self.idempotency_key)
        return self._retry(error, self.policy.backoff(self.count))

    def _retry(self, error: LedgerError, delay: float) -> Step:
        return Step(delay=delay) if self.count < self.policy.max_attempts else Step(error=error)


def recorded(response: HttpResponse, idempotency_key: str) -> dict[str, Any]:
    value: dict[str, Any] = response.json()
    value["replayed"] = response.headers.get("idempotent-replayed") == "true"
    value["idempotency_key"] = idempotency_key
    return value
