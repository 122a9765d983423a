"""The asyncio client: the same requests, retries, errors and exactly-once recording as the sync
client (both build on _core), over asyncio streams with a small HTTP/1.1 reader (no dependency)."""
from __future__ import annotations

import asyncio
import ssl
import urllib.parse
from typing import Any, AsyncIterator, Mapping

from ._core import (
    Attempts, Config, HttpRequest, HttpResponse, RetryPolicy, Signer, api_error, build_request,
    decision_body, fields_text, new_idempotency_key, recorded,
)
from .errors import LedgerNetworkError
from .note import parse_vkey
from .signing import SigningKey
from .verify import ExportWalk, Report, UnusableInput, verify_proof


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


async def _open(request: HttpRequest) -> tuple[_Connection, int, dict[str, str]]:
    parts = urllib.parse.urlsplit(request.url)
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    reader, writer = await asyncio.open_connection(parts.hostname, port, ssl=ssl.create_default_context() if secure else None)
    connection = _Connection(reader, writer)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    head = [f"{request.method} {target} HTTP/1.1", f"host: {parts.netloc}", "connection: close"]
    head += [f"{k}: {v}" for k, v in request.headers.items()]
    if request.body is not None:
        head.append(f"content-length: {len(request.body)}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (request.body or b""))
    await writer.drain()
    status_line = await reader.readline()
    if not status_line:
        await connection.close()
        raise ConnectionResetError("the connection closed before an answer")
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return connection, status, headers


async def _chunks(connection: _Connection, headers: Mapping[str, str]) -> AsyncIterator[bytes]:
    reader = connection.reader
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise asyncio.IncompleteReadError(b"", None)
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                await reader.readline()
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        while chunk := await reader.read(65536):
            yield chunk


async def send(request: HttpRequest, timeout: float) -> HttpResponse:
    async def exchange() -> HttpResponse:
        connection, status, headers = await _open(request)
        try:
            body = b"".join([chunk async for chunk in _chunks(connection, headers)])
        finally:
            await connection.close()
        return HttpResponse(status, headers, body)

    return await asyncio.wait_for(exchange(), timeout)


class AsyncLedgerClient:
    """The asyncio twin of LedgerClient: same methods, awaited."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, signer: Signer | None = None) -> None:
        self.config = Config(base_url, api_key, timeout, retry or RetryPolicy())
        self.signer = signer

    async def _send(self, request: HttpRequest, attempts: Attempts) -> HttpResponse:
        while True:
            attempts.start()
            try:
                step = attempts.answered(await send(request, self.config.timeout))
            except asyncio.TimeoutError as exc:
                step = attempts.failed(exc, timeout=True)
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
                step = attempts.failed(exc)
            if step.value is not None:
                return step.value
            if step.error is not None:
                raise step.error
            await asyncio.sleep(step.delay or 0)

    async def _call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
                    body: Mapping[str, Any] | None = None, auth: bool = True) -> Any:
        data = fields_text(body).encode("utf-8") if body is not None else None
        request = build_request(self.config, method, path, query=query, body=data, auth=auth)
        return (await self._send(request, Attempts(self.config.retry))).json()

    async def record_decision(self, fields: Mapping[str, Any], *, signer: Signer | None = None,
                              idempotency_key: str | None = None) -> dict[str, Any]:
        key = idempotency_key or new_idempotency_key()
        body = decision_body(fields, signer or self.signer, key)
        request = build_request(self.config, "POST", "/decisions", body=body, headers={"idempotency-key": key})
        return recorded(await self._send(request, Attempts(self.config.retry, key)), key)

    async def assert_decision(self, request: Mapping[str, Any]) -> Any:
        return await self._call("POST", "/decisions/assertion", body=request)

    async def register_signing_key(self, public_key: str, label: str) -> Any:
        return await self._call("POST", "/keys", body={"public_key": public_key, "label": label})

    async def create_signer(self, agent: str, label: str) -> Signer:
        key = SigningKey.generate()
        registered = await self.register_signing_key(key.public_key_b64url, label)
        return Signer(agent, registered["id"], key)

    async def list_signing_keys(self) -> Any:
        return await self._call("GET", "/keys")

    async def revoke_signing_key(self, key_id: str) -> Any:
        return await self._call("POST", f"/keys/{_seg(key_id)}/revoke", body={})

    async def list_decisions(self, limit: int | None = None) -> Any:
        return await self._call("GET", "/decisions", query={"limit": limit})

    async def get_agent(self, handle: str) -> Any:
        return await self._call("GET", f"/agents/{_seg(handle)}", auth=False)

    async def get_chain(self, handle: str, **query: Any) -> Any:
        return await self._call("GET", f"/agents/{_seg(handle)}/chain", query=query, auth=False)

    async def get_performance(self, handle: str, **query: Any) -> Any:
        return await self._call("GET", f"/agents/{_seg(handle)}/performance", query=query, auth=False)

    async def get_proof(self, record_id: str) -> Any:
        return await self._call("GET", f"/proof/{_seg(record_id)}", auth=False)

    async def list_ledger(self, **query: Any) -> Any:
        return await self._call("GET", "/ledger", query=query, auth=False)

    async def get_transparency(self) -> Any:
        return await self._call("GET", "/transparency", auth=False)

    async def export_lines(self, handle: str) -> AsyncIterator[str]:
        """GET /v1/export?agent=<handle>, streamed line by line as it arrives."""
        request = build_request(self.config, "GET", "/export", query={"agent": handle}, auth=False,
                                headers={"accept": "application/x-ndjson"})
        connection, status, headers = await _open(request)
        try:
            if status != 200:
                body = b"".join([c async for c in _chunks(connection, headers)])
                raise api_error(HttpResponse(status, headers, body), 1, None)
            pending = b""
            async for chunk in _chunks(connection, headers):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line.decode("utf-8").rstrip("\r")
            if pending:
                yield pending.decode("utf-8")
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise LedgerNetworkError(f"export cut off: {exc}", code="network_error", attempts=1) from exc
        finally:
            await connection.close()

    async def verify_agent(self, handle: str) -> Report:
        """The agent's whole export, verified line by line as it streams."""
        walk: ExportWalk | None = None
        async for line in self.export_lines(handle):
            if walk is None:
                walk = ExportWalk(line, f"{self.config.base_url}/export?agent={handle}")
            else:
                walk.add(line)
        if walk is None:
            raise UnusableInput(f"{self.config.base_url}/export?agent={handle} is empty")
        return walk.finish()

    async def verify_record(self, record_id: str) -> Report:
        bundle = await self.get_proof(record_id)
        vkey = parse_vkey((await self.get_transparency())["log"]["vkey"])
        return verify_proof(bundle, f"{self.config.base_url}/proof/{record_id}", vkey,
                            f"published on {self.config.base_url}/transparency")


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")
