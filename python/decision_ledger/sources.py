"""Where `python -m decision_ledger verify` reads from: a file (an NDJSON export, a saved chain
page or proof bundle) or a URL (an export streamed line by line, a chain followed page by page,
a proof bundle), and the log's vkey (--vkey, or the one published on /transparency)."""
from __future__ import annotations

import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Iterator

from .note import NoteError, Verifier, parse_vkey
import base64

from .verify import (
    BoundPassed, ConsistencyFetcher, Report, UnusableInput, nested_deeper_than, pinned_checkpoint_check, read_document, verify_chain_pages, verify_export, verify_proof,
)

_PROOF_URL = re.compile(r"^(https?://.+)/proof/[^/]+$", re.I)


def is_url(source: str) -> bool:
    return re.match(r"^https?://", source, re.I) is not None


@dataclass(frozen=True)
class Bounds:
    """The bounds against a server, as `ledger verify` (docs/python.md): the whole run, the longest
    wait for a byte, the bytes of a streamed answer (an NDJSON export), of one JSON value held whole
    (a document, or one line of an export)."""
    timeout: float = 600.0
    idle_timeout: float = 30.0
    max_bytes: int = 4 * 1024 ** 3
    max_json_bytes: int = 64 * 1024 ** 2


_MAX_REDIRECTS = 5
_CHUNK = 65536


class _Run:
    """The run's bounds and clock: every request and read checks them."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.deadline = time.monotonic() + bounds.timeout

    def wait_allowed(self) -> float:
        """The socket timeout of the next wait: the idle bound, or what is left of the run."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BoundPassed(f"no result within {self.bounds.timeout:g} s (--timeout)")
        return min(self.bounds.idle_timeout, left)

    def timed_out(self, url: str) -> BoundPassed:
        if time.monotonic() >= self.deadline:
            return BoundPassed(f"no result within {self.bounds.timeout:g} s (--timeout)")
        return BoundPassed(f"{url} sent nothing for {self.bounds.idle_timeout:g} s (--idle-timeout)")


_run = _Run(Bounds())


def set_bounds(bounds: Bounds) -> None:
    """Starts the run's clock under `bounds` (the command line calls it first)."""
    global _run
    _run = _Run(bounds)


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the origin asked (scheme, host, port), up to 5 in a row."""
    max_redirections = _MAX_REDIRECTS

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if _origin(newurl) != _origin(req.full_url):
            raise BoundPassed(f"{req.full_url} redirected to {newurl}, another origin: a verifier follows redirects only within "
                                "the origin it was given (verify that URL itself if you mean to)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or (443 if parts.scheme.lower() == "https" else 80)


_opener = urllib.request.build_opener(_SameOrigin)


class _Answer:
    """An answer read under the run's bounds: each wait at most the idle bound (and what is left of
    the run), the bytes counted; `read` holds the body whole (up to max_json_bytes), iterating
    streams it by lines (up to max_bytes, each line up to max_json_bytes)."""

    def __init__(self, url: str, response: Any) -> None:
        self.url = url
        self._response = response
        self.headers = response.headers
        self._total = 0

    def __enter__(self) -> "_Answer":
        return self

    def __exit__(self, *_: Any) -> None:
        self._response.close()

    def _chunk(self, limit: int, flag: str) -> bytes:
        sock = _socket_of(self._response)
        try:
            if sock is not None:
                sock.settimeout(_run.wait_allowed())
            chunk: bytes = self._response.read1(_CHUNK)
        except (TimeoutError, socket.timeout) as exc:
            raise _run.timed_out(self.url) from exc
        except OSError as exc:
            raise UnusableInput(f"cannot read {self.url}: {exc}") from exc
        self._total += len(chunk)
        if self._total > limit:
            raise BoundPassed(f"{self.url} sent more than {_show(limit)} ({flag})")
        if chunk:
            _run.wait_allowed()
        return chunk

    def read(self) -> bytes:
        limit = _run.bounds.max_json_bytes
        declared = self.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise BoundPassed(f"{self.url} declares {declared} bytes, over {_show(limit)} (--max-json-bytes)")
        parts = []
        while chunk := self._chunk(limit, "--max-json-bytes"):
            parts.append(chunk)
        return b"".join(parts)

    def __iter__(self) -> Iterator[bytes]:
        line_limit = _run.bounds.max_json_bytes
        pending = bytearray()
        while chunk := self._chunk(_run.bounds.max_bytes, "--max-bytes"):
            start = 0
            end = chunk.find(b"\n")
            while end >= 0:
                pending += chunk[start:end + 1]
                self._check_line(len(pending) - 1, line_limit)
                yield bytes(pending)
                pending.clear()
                start = end + 1
                end = chunk.find(b"\n", start)
            pending += chunk[start:]
            self._check_line(len(pending), line_limit)
        if pending:
            yield bytes(pending)

    def _check_line(self, length: int, limit: int) -> None:
        if length > limit:
            raise BoundPassed(f"{self.url} sent a line longer than {_show(limit)} (--max-json-bytes)")


def _socket_of(response: Any) -> Any:
    """The answer's socket (http.client keeps it behind its buffered reader), to bound each wait."""
    return getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)


def _show(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"


def _get(url: str) -> _Answer:
    request = urllib.request.Request(url, headers={"accept": "application/x-ndjson, application/json"})
    try:
        return _Answer(url, _opener.open(request, timeout=_run.wait_allowed()))
    except urllib.error.HTTPError as exc:
        with _Answer(url, exc) as answer:
            body = answer.read().decode("utf-8", "replace")
        try:
            error = json.loads(body)["error"]
            message = f"{error['code']}: {error['message']}"
        except (ValueError, KeyError, TypeError, RecursionError):
            message = body[:200]
        raise UnusableInput(f"{url} answered {exc.code}" + (f" ({message})" if message else "")) from exc
    except (TimeoutError, socket.timeout) as exc:
        raise _run.timed_out(url) from exc
    except (urllib.error.URLError, OSError) as exc:
        if isinstance(getattr(exc, "reason", None), (TimeoutError, socket.timeout)):
            raise _run.timed_out(url) from exc
        raise UnusableInput(f"cannot fetch {url}: {exc}") from exc


def _lines(stream: Any) -> Iterator[str]:
    for raw in stream:
        yield raw.decode("utf-8", "surrogateescape")


def _document(text: str, origin: str) -> dict[str, Any]:
    document = read_document(text, origin)
    if not isinstance(document, dict):
        raise UnusableInput(f"{origin} is not a JSON object")
    return document


def _pages(first: dict[str, Any], url: str | None) -> Iterator[dict[str, Any]]:
    page = first
    yield page
    while url is not None and page.get("has_more") and page.get("next_after_seq") is not None:
        after = page["next_after_seq"]
        parts = urllib.parse.urlsplit(url)
        query = dict(urllib.parse.parse_qsl(parts.query))
        query["after_seq"] = str(after)
        next_url = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
        with _get(next_url) as response:
            page = _document(response.read().decode("utf-8"), next_url)
        if page.get("after_seq") != after:
            raise UnusableInput(f"the page after seq {after} says it starts after seq {page.get('after_seq')}")
        yield page


def published_vkey(base_url: str) -> Verifier | None:
    try:
        with _get(base_url.rstrip("/") + "/transparency") as response:
            vkey = read_document(response.read().decode("utf-8", "replace"), response.url)["log"]["vkey"]
        return parse_vkey(vkey)
    except BoundPassed:
        raise
    except (UnusableInput, ValueError, KeyError, TypeError, NoteError):
        return None


def read_vkey(given: str) -> Verifier:
    text = Path(given).read_text(encoding="utf-8").strip() if Path(given).is_file() else given
    try:
        return parse_vkey(text)
    except NoteError as exc:
        raise UnusableInput(f"--vkey: {exc}") from exc


def _consistency(base_url: str) -> ConsistencyFetcher:
    def fetch(size1: int, size2: int) -> list[bytes]:
        with _get(f"{base_url}/log/proof/consistency?from={size1}&to={size2}") as response:
            document = read_document(response.read().decode("utf-8", "replace"), response.url)
            return [base64.b64decode(h, validate=True) for h in document["hashes"]]
    return fetch


def _from_document(document: dict[str, Any], origin: str, url: str | None, vkey: Verifier | None, vkey_from: str,
                   pins: list[str] | None = None) -> Report:
    kind = document.get("object")
    if kind == "proof":
        report = verify_proof(document, origin, vkey, vkey_from)
        if pins:
            match = _PROOF_URL.match(url or "")
            pinned_checkpoint_check(report, document, pins, vkey, _consistency(match.group(1)) if match else None)
        return report
    if kind == "chain":
        return _not_pinned(verify_chain_pages(_pages(document, url), origin), pins)
    raise UnusableInput(f"{origin} is not an export, a chain page or a proof bundle (object is {json.dumps(kind)})")


def read_pins(paths: list[str]) -> list[str]:
    try:
        return [Path(p).read_text(encoding="utf-8") for p in paths]
    except OSError as exc:
        raise UnusableInput(f"--pin: {exc}") from exc


def verify_source(source: str, vkey_text: str | None = None, pins: list[str] | None = None) -> Report:
    """`pins`: checkpoint texts (signed notes) saved earlier, checked against a proof bundle."""
    vkey = read_vkey(vkey_text) if vkey_text else None
    vkey_from = "--vkey" if vkey else "none"
    if (is_url(source) and re.search(r"/log/?$", source)) or (not is_url(source) and Path(source, "checkpoint").is_file()):
        return _verify_log_source(source, vkey, vkey_from, pins or [])
    if is_url(source):
        match = _PROOF_URL.match(source)
        if vkey is None and match:
            vkey = published_vkey(match.group(1))
            vkey_from = f"published on {match.group(1)}/transparency" if vkey else "none"
        with _get(source) as response:
            if "ndjson" in response.headers.get("content-type", ""):
                lines = _lines(response)
                header = next(lines, None)
                if header is None:
                    raise UnusableInput(f"{source} is empty")
                return _not_pinned(verify_export(header, lines, source), pins)
            document = _document(response.read().decode("utf-8"), source)
        return _from_document(document, source, source, vkey, vkey_from, pins)
    try:
        handle = open(source, "rb")
    except OSError as exc:
        raise UnusableInput(f"cannot read {source}: {exc}") from exc
    with handle:
        lines = _lines(handle)
        first = next(lines, None)
        if first is None:
            raise UnusableInput(f"{source} is empty")
        try:
            header = None if nested_deeper_than(first) else json.loads(first)
        except ValueError:
            header = None
        if isinstance(header, dict) and header.get("object") == "export":
            return _not_pinned(verify_export(first, lines, source), pins)
        text = first + "".join(lines)
    report = _from_document(_document(text, source), source, None, vkey, vkey_from, pins)
    return report


def _not_pinned(report: Report, pins: list[str] | None) -> Report:
    if pins:
        report.check("pinned_checkpoint", None, "a pinned checkpoint is checked against a proof bundle, not against an export or a chain")
    return report


def _verify_log_source(source: str, vkey: Verifier | None, vkey_from: str, pins: list[str]) -> Report:
    from .log import verify_log

    if is_url(source):
        prefix = source.rstrip("/")
        if vkey is None:
            base = prefix[: -len("/log")]
            vkey = published_vkey(base)
            vkey_from = f"published on {base}/transparency" if vkey else "none"

        def read(path: str) -> bytes | None:
            try:
                with _get(f"{prefix}/{path}") as response:
                    return response.read()  # type: ignore[no-any-return]
            except UnusableInput as exc:
                if " answered 404" in str(exc):
                    return None
                raise
    else:
        def read(path: str) -> bytes | None:
            file = Path(source, path)
            return file.read_bytes() if file.is_file() else None
    return verify_log(read, source, vkey, vkey_from, pins)
