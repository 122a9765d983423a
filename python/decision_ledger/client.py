"""The synchronous client (standard library http.client). Shares requests, retries and errors
with the asyncio client through _core; records each decision exactly once across retries."""
from __future__ import annotations

import http.client
import socket
import time
import urllib.parse
from typing import Any, Iterator, Mapping

from ._core import (
    Attempts, Config, HttpRequest, HttpResponse, RetryPolicy, Signer, api_error, build_request, decision_body,
    fields_text, new_idempotency_key, recorded,
)
from .note import parse_vkey
from .errors import LedgerError, LedgerNetworkError
from .signing import SigningKey
from .verify import Report, verify_export, verify_proof

_HTTP_ERRORS = (OSError, http.client.HTTPException)


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return cls(parts.netloc, timeout=timeout), target


def send(request: HttpRequest, timeout: float) -> HttpResponse:
    connection, target = _connection(request.url, timeout)
    try:
        connection.request(request.method, target, body=request.body, headers=request.headers)
        answer = connection.getresponse()
        body = answer.read()
        return HttpResponse(answer.status, {k.lower(): v for k, v in answer.getheaders()}, body)
    finally:
        connection.close()


class LedgerClient:
    """`base_url` is the API base (`/v1` added when missing); `api_key` is needed for writes."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, signer: Signer | None = None) -> None:
        self.config = Config(base_url, api_key, timeout, retry or RetryPolicy())
        self.signer = signer

    # -- transport -----------------------------------------------------------------------------

    def _send(self, request: HttpRequest, attempts: Attempts) -> HttpResponse:
        while True:
            attempts.start()
            try:
                step = attempts.answered(send(request, self.config.timeout))
            except socket.timeout as exc:
                step = attempts.failed(exc, timeout=True)
            except _HTTP_ERRORS as exc:
                step = attempts.failed(exc)
            if step.value is not None:
                return step.value
            if step.error is not None:
                raise step.error
            time.sleep(step.delay or 0)

    def _call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
              json_body: bytes | None = None, auth: bool = True) -> Any:
        request = build_request(self.config, method, path, query=query, body=json_body, auth=auth)
        return self._send(request, Attempts(self.config.retry)).json()

    # -- writes ------------------------------------------------------------------------------------

    def record_decision(self, fields: Mapping[str, Any], *, signer: Signer | None = None,
                        idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /v1/decisions exactly once: one Idempotency-Key and the same body bytes on every
        attempt; answers the decision plus `replayed` and `idempotency_key`."""
        key = idempotency_key or new_idempotency_key()
        body = decision_body(fields, signer or self.signer, key)
        request = build_request(self.config, "POST", "/decisions", body=body, headers={"idempotency-key": key})
        return recorded(self._send(request, Attempts(self.config.retry, key)), key)

    def assert_decision(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """POST /v1/decisions/assertion: the service's payload for fields plus occurred_at and nonce."""
        return self._call("POST", "/decisions/assertion", json_body=fields_text(request).encode("utf-8"))  # type: ignore[no-any-return]

    def register_signing_key(self, public_key: str, label: str) -> dict[str, Any]:
        body = fields_text({"public_key": public_key, "label": label}).encode("utf-8")
        return self._call("POST", "/keys", json_body=body)  # type: ignore[no-any-return]

    def create_signer(self, agent: str, label: str) -> Signer:
        """A new Ed25519 key pair, its public half registered; keep `signer.key.seed` private."""
        key = SigningKey.generate()
        registered = self.register_signing_key(key.public_key_b64url, label)
        return Signer(agent, registered["id"], key)

    def list_signing_keys(self) -> Any:
        return self._call("GET", "/keys")

    def revoke_signing_key(self, key_id: str) -> Any:
        return self._call("POST", f"/keys/{urllib.parse.quote(key_id, safe='')}/revoke", json_body=b"{}")

    def list_decisions(self, limit: int | None = None) -> Any:
        return self._call("GET", "/decisions", query={"limit": limit})

    # -- public reads ------------------------------------------------------------------------------

    def get_agent(self, handle: str) -> Any:
        return self._call("GET", f"/agents/{_seg(handle)}", auth=False)

    def get_chain(self, handle: str, **query: Any) -> Any:
        return self._call("GET", f"/agents/{_seg(handle)}/chain", query=query, auth=False)

    def get_performance(self, handle: str, **query: Any) -> Any:
        return self._call("GET", f"/agents/{_seg(handle)}/performance", query=query, auth=False)

    def get_proof(self, record_id: str) -> Any:
        return self._call("GET", f"/proof/{_seg(record_id)}", auth=False)

    def list_ledger(self, **query: Any) -> Any:
        return self._call("GET", "/ledger", query=query, auth=False)

    def get_transparency(self) -> Any:
        return self._call("GET", "/transparency", auth=False)

    def export_lines(self, handle: str) -> Iterator[str]:
        """GET /v1/export?agent=<handle>, streamed: the header line, then one record per line."""
        request = build_request(self.config, "GET", "/export", query={"agent": handle}, auth=False,
                                headers={"accept": "application/x-ndjson"})
        connection, target = _connection(request.url, self.config.timeout)
        try:
            connection.request("GET", target, headers=request.headers)
            answer = connection.getresponse()
            if answer.status != 200:
                body = answer.read()
                raise api_error(HttpResponse(answer.status, {k.lower(): v for k, v in answer.getheaders()}, body), 1, None)
            for raw in answer:
                yield raw.decode("utf-8").rstrip("\r\n")
        except _HTTP_ERRORS as exc:
            raise LedgerNetworkError(f"export cut off: {exc}", code="network_error", attempts=1) from exc
        finally:
            connection.close()

    # -- verification ------------------------------------------------------------------------------

    def verify_agent(self, handle: str) -> Report:
        """The agent's whole export, streamed and verified (canon_v1 §5 and the published head)."""
        lines = self.export_lines(handle)
        return verify_export(next(lines), lines, f"{self.config.base_url}/export?agent={handle}")

    def verify_record(self, record_id: str) -> Report:
        """The record's proof bundle, with its inclusion under the vkey published on /transparency."""
        bundle = self.get_proof(record_id)
        vkey = parse_vkey(self.get_transparency()["log"]["vkey"])
        return verify_proof(bundle, f"{self.config.base_url}/proof/{record_id}", vkey,
                            f"published on {self.config.base_url}/transparency")


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")


__all__ = ["LedgerClient", "LedgerError", "RetryPolicy", "Signer"]
