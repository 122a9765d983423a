"""Typed errors: every failure carries the interface's error fields (ledger-interface 2.7)."""
from __future__ import annotations

from typing import Any


class LedgerError(Exception):
    """type, code, param and request_id as the service sent them; status 0 when it never answered."""

    def __init__(
        self, message: str, *, code: str, type: str = "api_error", param: str | None = None,
        request_id: str | None = None, status: int = 0, retry_after: float | None = None,
        attempts: int = 0, idempotency_key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.type = type
        self.param = param
        self.request_id = request_id
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        self.idempotency_key = idempotency_key

    def to_dict(self) -> dict[str, Any]:
        body = {"type": self.type, "code": self.code, "message": self.message}
        body.update({k: v for k, v in (("param", self.param), ("request_id", self.request_id)) if v is not None})
        return {"error": body, "status": self.status}

    def __str__(self) -> str:
        where = f" (param {self.param})" if self.param else ""
        rid = f" [{self.request_id}]" if self.request_id else ""
        return f"{self.code}: {self.message}{where}{rid}"


class LedgerApiError(LedgerError):
    """The service answered with an error (or a body without the interface's shape)."""


class LedgerNetworkError(LedgerError):
    """No answer: code network_error or timeout."""


class LedgerValidationError(LedgerError):
    """Refused locally before sending, by the same checks the service runs, with the same param."""
