"""Where `python -m decision_ledger verify` reads from: a file (an NDJSON export, a saved chain
page or proof bundle) or a URL (an export streamed line by line, a chain followed page by page,
a proof bundle), and the log's vkey (--vkey, or the one published on /transparency)."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

from .note import NoteError, Verifier, parse_vkey
import base64

from .verify import (
    ConsistencyFetcher, Report, UnusableInput, pinned_checkpoint_check, verify_chain_pages, verify_export, verify_proof,
)

_PROOF_URL = re.compile(r"^(https?://.+)/proof/[^/]+$", re.I)


def is_url(source: str) -> bool:
    return re.match(r"^https?://", source, re.I) is not None


def _get(url: str) -> Any:
    request = urllib.request.Request(url, headers={"accept": "application/x-ndjson, application/json"})
    try:
        return urllib.request.urlopen(request, timeout=60)
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace")
        try:
            error = json.loads(body)["error"]
            message = f"{error['code']}: {error['message']}"
        except (ValueError, KeyError, TypeError):
            message = body[:200]
        raise UnusableInput(f"{url} answered {exc.code}" + (f" ({message})" if message else "")) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise UnusableInput(f"cannot fetch {url}: {exc}") from exc


def _lines(stream: Any) -> Iterator[str]:
    for raw in stream:
        yield raw.decode("utf-8", "surrogateescape")


def _document(text: str, origin: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UnusableInput(f"{origin} is neither an NDJSON export nor a JSON document: {exc}") from exc
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
            vkey = json.loads(response.read())["log"]["vkey"]
        return parse_vkey(vkey)
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
            return [base64.b64decode(h, validate=True) for h in json.loads(response.read())["hashes"]]
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
            header = json.loads(first)
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
