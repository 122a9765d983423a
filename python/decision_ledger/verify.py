"""The offline verifier (canon_v1 §5, docs/log.md "Verifying"), written from the docs: a chain of
published records (`{"entry", "chain_hash", "content", "document"?}`) from an export, chain pages
or a proof bundle, each check tallied under the names `ledger verify` prints, and a verdict.

Exit codes as `ledger verify`: 0 every check passed, 1 a check failed, 2 the input is unusable.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .canon import CanonError, JsonNumber, canonical_text_of_read, read_json
from .decision import parse_rfc3339
from .hashes import ZERO_HASH
from .merkle import ProofError, leaf_hash, root_from_inclusion, verify_consistency
from .note import NoteError, Verifier, open_checkpoint, parse_tlog_proof
from .signing import MissingCryptography, b64url_decode, load_public_key, verify_with

CHECKS: tuple[tuple[str, str], ...] = (
    ("record_form", "each record is a JSON object with entry, chain_hash and content, and nothing unknown"),
    ("entry_members", "each chain entry has exactly the canon_v1 members, in their canonical form"),
    ("seq", "seq runs without gap"),
    ("prev_hash", "prev_hash links to the previous chain_hash"),
    ("recorded_at", "recorded_at well-formed and non-decreasing"),
    ("content_bytes", "the content text is the bytes whose sha256 is content_hash"),
    ("content_hash", "content re-serialises (canon_v1) to content_hash"),
    ("content_envelope", "content carries canon_v1, the agent and the record type"),
    ("document", "the convenience document says the same as the content"),
    ("chain_hash", "chain entry re-serialises (canon_v1) to chain_hash"),
    ("signature", "agent signatures verify under a key valid at recorded_at"),
)
MAX_LISTED = 100
RECORD_MEMBERS = {"entry", "chain_hash", "content", "document", "proof_url", "provenance", "broker", "price_observation"}
ENTRY_MEMBERS = ("canon", "agent", "seq", "id", "type", "recorded_at", "content_hash", "prev_hash")
RECORD_TYPES = ("decision", "execution", "activity")
_SEQ = re.compile(r"[1-9][0-9]{0,15}")
_RECORDED_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


_RECORD_READER = json.JSONDecoder(parse_float=JsonNumber, parse_int=JsonNumber)


class UnusableInput(Exception):
    """The input cannot be verified at all (exit 2)."""


class BoundPassed(UnusableInput):
    """A bound against the source passed (time, bytes, depth, a redirect to another origin): the
    run ends unusable even where a failed read would otherwise be a note."""


MAX_JSON_NESTING = 128
"""How deep a JSON document may nest, as `ledger verify`: twice what the service accepts (64)."""

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nested_deeper_than(text: str, limit: int = MAX_JSON_NESTING) -> bool:
    """Whether JSON text nests arrays and objects deeper than `limit` (strings skipped), without
    parsing it: Python's reader recurses, and fails on deep input with RecursionError."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for c in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if c in "[{" else -1
        if depth > limit:
            return True
    return False


def read_document(text: str, origin: str) -> Any:
    """A JSON document from a source: deeper than MAX_JSON_NESTING, or not JSON, is unusable input."""
    if nested_deeper_than(text):
        raise BoundPassed(f"{origin} nests JSON deeper than {MAX_JSON_NESTING} levels")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UnusableInput(f"{origin} is neither an NDJSON export nor a JSON document: {exc}") from exc


@dataclass
class Tally:
    checked: int = 0
    failed: int = 0
    skipped: int = 0


@dataclass
class Failure:
    name: str
    where: str
    detail: str
    seq: int | None = None


@dataclass
class ExtraCheck:
    name: str
    ok: bool | None  # None: a note, neither pass nor fail
    summary: str
    failures: list[Failure] = field(default_factory=list)


@dataclass
class Report:
    title: list[str]
    subject: str = ""
    records: int = 0
    tallies: dict[str, Tally] = field(default_factory=lambda: {name: Tally() for name, _ in CHECKS})
    failures: list[Failure] = field(default_factory=list)
    failure_count: int = 0
    extra: list[ExtraCheck] = field(default_factory=list)
    log: bool = False  # a whole log: only its own checks are printed

    def fail(self, name: str, where: str, detail: str, seq: int | None = None) -> None:
        self.tallies[name].failed += 1
        self.failure_count += 1
        if len(self.failures) < MAX_LISTED:
            self.failures.append(Failure(name, where, detail, seq))

    def check(self, name: str, ok: bool | None, summary: str, failures: list[Failure] | None = None) -> None:
        self.extra.append(ExtraCheck(name, ok, summary, failures or []))

    @property
    def ok(self) -> bool:
        return self.failure_count == 0 and all(c.ok is not False for c in self.extra)

    def failed_names(self) -> list[str]:
        names = [name for name, t in self.tallies.items() if t.failed]
        return names + [c.name for c in self.extra if c.ok is False]

    def lines(self) -> list[str]:
        out = list(self.title)
        for name, description in () if self.log else CHECKS:
            t = self.tallies[name]
            status = "FAIL" if t.failed else "skip" if t.checked == 0 else "ok"
            skipped = f", {t.skipped} not checked (not in the input)" if t.skipped else ""
            out.append(f"  {status:<5}{name:<18}{t.checked} checked, {t.failed} failed{skipped}  ({description})")
            out.extend(f"          {f.where}: {f.detail}" for f in self.failures if f.name == name)
        if self.failure_count > len(self.failures):
            out.append(f"          ... and {self.failure_count - len(self.failures)} more failures not listed")
        for c in self.extra:
            status = "note" if c.ok is None else "ok" if c.ok else "FAIL"
            out.append(f"  {status:<5}{c.name:<18}{c.summary}")
            out.extend(f"          {f.where}: {f.detail}" for f in c.failures)
        if self.ok and self.log:
            out.append(f"verdict: PASS: {self.records} entries of {self.subject} verified (log_v1 §6 checks 2-4)")
        elif self.ok:
            out.append(f"verdict: PASS: {self.records} records of {self.subject} verified (canon_v1 §5 checks 1-5)")
        else:
            out.append(f"verdict: FAIL: {', '.join(self.failed_names())} failed; the listed seq/ids say where")
        return out


@dataclass(frozen=True)
class Key:
    id: str
    public_key: str
    revoked_at: str | None


def keys_of(value: Any, origin: str) -> dict[str, Key]:
    if not isinstance(value, list) or not all(
        isinstance(k, dict) and isinstance(k.get("id"), str) and isinstance(k.get("public_key"), str) for k in value
    ):
        raise UnusableInput(f"{origin}: keys must be a list of {{id, public_key, revoked_at}}")
    return {k["id"]: Key(k["id"], k["public_key"], k.get("revoked_at")) for k in value}


def _where(seq: int | None, record_id: str | None, line: int | None) -> str:
    parts = [f"seq {seq}"] if seq is not None else []
    parts += [record_id] if record_id else []
    parts += [f"line {line}"] if line is not None else []
    return " ".join(parts) or "record"


@dataclass
class _Last:
    seq: int
    chain_hash: str
    recorded_at: str


class ChainWalk:
    """Walks one agent's records in order. `start` is the record before the first one (None when
    the walk starts mid-chain: the first link is then taken as stated)."""

    def __init__(self, report: Report, agent: str, keys: Mapping[str, Key], start: _Last | None) -> None:
        self.report, self.agent, self.keys, self.last = report, agent, keys, start
        self.signatures_unchecked = 0
        self._public_keys: dict[str, Any] = {}
        self.require_content = True  # a chain page with payloads=false carries none

    def add(self, raw: str | Mapping[str, Any], line: int | None = None) -> None:
        report = self.report
        report.records += 1
        report.tallies["record_form"].checked += 1
        if isinstance(raw, str) and nested_deeper_than(raw):
            report.fail("record_form", _where(None, None, line), f"record nests JSON deeper than {MAX_JSON_NESTING} levels")
            return
        try:
            record = _RECORD_READER.decode(raw) if isinstance(raw, str) else raw
        except ValueError as exc:
            report.fail("record_form", _where(None, None, line), f"record not valid JSON: {exc}")
            return
        problem = _form_problem(record, self.require_content)
        if problem:
            report.fail("record_form", _where(None, None, line), f"record {problem}")
            return
        entry: dict[str, Any] = record["entry"]
        seq = int(entry["seq"]) if isinstance(entry.get("seq"), str) and _SEQ.fullmatch(entry["seq"]) else None
        where = _where(seq, entry.get("id") if isinstance(entry.get("id"), str) else None, line)
        self._entry_members(entry, where, seq)
        self._links(entry, record["chain_hash"], where, seq)
        if "content" in record:
            payload, content = self._content(entry, record["content"], where, seq)
        else:
            payload, content = None, None
            for name in ("content_bytes", "content_hash", "content_envelope"):
                report.tallies[name].skipped += 1
        if "document" in record:
            self._document(record["document"], record["content"], where, seq)
        self._chain_hash(entry, record["chain_hash"], where, seq)
        if "signature" in entry and isinstance(entry["signature"], dict):
            self._signature(entry, payload, content, where, seq)

    def _entry_members(self, entry: dict[str, Any], where: str, seq: int | None) -> None:
        self.report.tallies["entry_members"].checked += 1
        problems = [f'unknown member "{k}"' for k in entry if k not in ENTRY_MEMBERS and k != "signature"]
        problems += [f"{k} is missing or not a string" for k in ENTRY_MEMBERS if not isinstance(entry.get(k), str)]
        if entry.get("canon", "canon_v1") != "canon_v1":
            problems.append(f'canon is {json.dumps(entry["canon"])}, expected "canon_v1"')
        if isinstance(entry.get("agent"), str) and entry["agent"] != self.agent:
            problems.append(f'agent is {json.dumps(entry["agent"])}, expected {json.dumps(self.agent)}')
        if isinstance(entry.get("seq"), str) and seq is None:
            problems.append(f'seq {json.dumps(entry["seq"])} is not a canonical decimal string')
        if isinstance(entry.get("type"), str) and entry["type"] not in RECORD_TYPES:
            problems.append(f'type {json.dumps(entry["type"])} is not a record type')
        signature = entry.get("signature")
        if signature is not None and not (
            isinstance(signature, dict) and sorted(signature) == ["key_id", "nonce", "signature"]
            and all(isinstance(v, str) for v in signature.values())
        ):
            problems.append("signature must be exactly {key_id, nonce, signature}, all strings")
        if problems:
            self.report.fail("entry_members", where, "; ".join(problems), seq)

    def _links(self, entry: dict[str, Any], chain_hash: str, where: str, seq: int | None) -> None:
        report, last = self.report, self.last
        prev_hash, recorded_at = entry.get("prev_hash"), entry.get("recorded_at")
        if last is not None:
            report.tallies["seq"].checked += 1
            if seq != last.seq + 1:
                report.fail("seq", where, f"expected seq {last.seq + 1}, found {seq if seq is not None else entry.get('seq')}", seq)
            report.tallies["prev_hash"].checked += 1
            if prev_hash != last.chain_hash:
                what = "the all-zero genesis prev_hash" if last.seq == 0 else "chain_hash of the previous record"
                report.fail("prev_hash", where, f"expected prev_hash {last.chain_hash} ({what}), found {prev_hash}", seq)
        report.tallies["recorded_at"].checked += 1
        if not isinstance(recorded_at, str) or not _RECORDED_AT.fullmatch(recorded_at):
            report.fail("recorded_at", where, f"recorded_at {json.dumps(recorded_at)} is not a valid YYYY-MM-DDTHH:MM:SS.sssZ", seq)
            recorded_at = last.recorded_at if last else ""
        elif last is not None and last.recorded_at and recorded_at < last.recorded_at:
            report.fail("recorded_at", where, f"recorded_at {recorded_at} is before the previous record's {last.recorded_at}", seq)
        # Resynchronise on the record found, so one gap or one altered record is one failure.
        base = seq if seq is not None else (last.seq + 1 if last else 0)
        self.last = _Last(base, chain_hash, recorded_at)

    def _content(self, entry: dict[str, Any], text: str, where: str, seq: int | None) -> tuple[bytes | None, Any]:
        report = self.report
        stated = entry.get("content_hash")
        report.tallies["content_bytes"].checked += 1
        raw = text.encode("utf-8", "surrogatepass")
        found = hashlib.sha256(raw).hexdigest()
        if found != stated:
            report.fail("content_bytes", where, f"sha256 of the content text is {found}, content_hash is {stated}", seq)
        report.tallies["content_hash"].checked += 1
        try:
            content = read_json(text)
            payload = canonical_text_of_read(content).encode("utf-8")
        except (CanonError, TypeError) as exc:
            report.fail("content_hash", where, f"content cannot be serialised as canon_v1: {exc}", seq)
            return None, None
        recomputed = found if payload == raw else hashlib.sha256(payload).hexdigest()
        if recomputed != stated:
            report.fail("content_hash", where, f"expected content_hash {recomputed}, found {stated}", seq)
        report.tallies["content_envelope"].checked += 1
        problem = self._envelope_problem(content, entry)
        if problem:
            report.fail("content_envelope", where, problem, seq)
        return payload, content

    def _envelope_problem(self, content: Any, entry: dict[str, Any]) -> str | None:
        if not isinstance(content, dict):
            return "content is not a JSON object"
        problems = []
        if content.get("canon") != "canon_v1":
            problems.append(f'canon is {json.dumps(content.get("canon"))}, expected "canon_v1"')
        if content.get("agent") != self.agent:
            problems.append(f'agent is {json.dumps(content.get("agent"))}, expected {json.dumps(self.agent)}')
        if content.get("type") != entry.get("type"):
            problems.append(f'type is {json.dumps(content.get("type"))}, expected {json.dumps(entry.get("type"))}')
        return "; ".join(problems) or None

    def _document(self, document: Any, text: str, where: str, seq: int | None) -> None:
        self.report.tallies["document"].checked += 1
        try:
            same = canonical_text_of_read(document) == text
        except TypeError:
            same = False
        if not same:
            self.report.fail("document", where, "document does not serialise (canon_v1) to the content text", seq)

    def _chain_hash(self, entry: dict[str, Any], stated: str, where: str, seq: int | None) -> None:
        self.report.tallies["chain_hash"].checked += 1
        try:
            recomputed = hashlib.sha256(canonical_text_of_read(entry).encode("utf-8")).hexdigest()
        except TypeError as exc:
            self.report.fail("chain_hash", where, f"chain entry cannot be serialised as canon_v1: {exc}", seq)
            return
        if recomputed != stated:
            self.report.fail("chain_hash", where, f"expected chain_hash {recomputed}, found {stated}", seq)

    def _signature(self, entry: dict[str, Any], payload: bytes | None, content: Any, where: str, seq: int | None) -> None:
        tally = self.report.tallies["signature"]
        if payload is None:
            tally.skipped += 1
            return
        tally.checked += 1
        problem = self._signature_problem(entry, payload, content)
        if problem is None:
            return
        if problem == "":
            tally.checked -= 1
            tally.skipped += 1
            self.signatures_unchecked += 1
            return
        self.report.fail("signature", where, problem, seq)

    def _signature_problem(self, entry: dict[str, Any], payload: bytes, content: Any) -> str | None:
        sig = entry["signature"]
        nonce = content.get("nonce") if isinstance(content, dict) else None
        if nonce != sig.get("nonce"):
            return f"signature nonce {json.dumps(sig.get('nonce'))} differs from the content's nonce {json.dumps(nonce)}"
        key = self.keys.get(sig.get("key_id", ""))
        if key is None:
            return f"signing key {json.dumps(sig.get('key_id'))} is not known"
        if key.revoked_at is not None and _instant(key.revoked_at) < _instant(entry.get("recorded_at", "")):
            return f"signing key {key.id} was revoked at {key.revoked_at}, before the record's recorded_at {entry.get('recorded_at')}"
        try:
            if key.id not in self._public_keys:
                self._public_keys[key.id] = load_public_key(b64url_decode(key.public_key))
            valid = verify_with(self._public_keys[key.id], b64url_decode(sig.get("signature", "")), payload)
        except MissingCryptography:
            return ""
        except ValueError:
            valid = False
        return None if valid else f"Ed25519 signature does not verify over the content under key {key.id}"


def _instant(text: str) -> float:
    try:
        return float(parse_rfc3339(text))
    except ValueError:
        return float("inf")


def _form_problem(record: Any, require_content: bool = True) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    unknown = next((k for k in record if k not in RECORD_MEMBERS), None)
    if unknown is not None:
        return f'has an unknown member "{unknown}"'
    if "content" not in record and require_content:
        return "has no content (this input must carry every record's content)"
    if not isinstance(record.get("entry"), dict):
        return "has no entry object"
    if not isinstance(record.get("chain_hash"), str):
        return "has no chain_hash string"
    if "content" in record and not isinstance(record["content"], str):
        return "content is not a string"
    return None


GENESIS = _Last(0, ZERO_HASH, "")


def _finish_walk(report: Report, walk: ChainWalk) -> None:
    if walk.signatures_unchecked:
        report.check("signature", None, f"{walk.signatures_unchecked} signature(s) not checked: {MissingCryptography()}")


def _head_check(report: Report, walk: ChainWalk, head: Mapping[str, Any], what: str) -> None:
    last = walk.last
    last_seq, last_hash = (last.seq, last.chain_hash) if last else (0, ZERO_HASH)
    ok = last_seq == head.get("seq") and last_hash == head.get("chain_hash")
    report.check("head", ok, f"the last record is the {what} (seq {head.get('seq')}, chain_hash {head.get('chain_hash')})" if ok
                 else f"the {what} is seq {head.get('seq')} chain_hash {head.get('chain_hash')}, but the records end at seq {last_seq} chain_hash {last_hash}")


def _need(ok: bool, origin: str, what: str) -> None:
    if not ok:
        raise UnusableInput(f"{origin}: {what}")


def _check_canon(document: Mapping[str, Any], origin: str, what: str) -> None:
    _need(document.get("canonicalisation") == "canon_v1" and document.get("algorithm") == "sha256",
          origin, f"the {what} is not canon_v1 / sha256")


def _check_head(head: Any, origin: str) -> Mapping[str, Any]:
    _need(isinstance(head, dict) and isinstance(head.get("seq"), int) and isinstance(head.get("chain_hash"), str),
          origin, "head must be {seq, chain_hash, recorded_at}")
    return head  # type: ignore[no-any-return]


class ExportWalk:
    """An NDJSON export verified as it streams: the header line first, then `add` each line
    (numbered from 2), then `finish` for the head and record count checks."""

    def __init__(self, header_line: str, origin: str) -> None:
        header = read_document(header_line, origin)
        _need(isinstance(header, dict) and header.get("object") == "export", origin, "does not start with an export header")
        _check_canon(header, origin, "export")
        agent = header.get("agent")
        _need(isinstance(agent, dict) and isinstance(agent.get("handle"), str), origin, "the export header names no agent")
        _need(isinstance(header.get("records"), int), origin, "the export header has no record count")
        self.head = _check_head(header.get("head"), origin)
        self.announced: int = header["records"]
        self.report = Report([f"export of agent {agent['handle']} ({header.get('format')}) from {origin}",
                              f"published head: seq {self.head['seq']}, chain_hash {self.head['chain_hash']}"],
                             subject=agent["handle"])
        self.walk = ChainWalk(self.report, agent["handle"], keys_of(header.get("keys"), origin), GENESIS)
        self.line = 1

    def add(self, line: str) -> None:
        self.line += 1
        line = line.rstrip("\r\n")
        if line:
            self.walk.add(line, self.line)

    def finish(self) -> Report:
        _finish_walk(self.report, self.walk)
        _head_check(self.report, self.walk, self.head, "export header's head")
        self.report.check("record_count", self.report.records == self.announced,
                          f"the header announces {self.announced} records; the export holds {self.report.records}")
        return self.report


def verify_export(header_line: str, lines: Iterable[str], origin: str) -> Report:
    """An NDJSON export: the header line, then one record per line (line numbers from 2)."""
    walk = ExportWalk(header_line, origin)
    for line in lines:
        walk.add(line)
    return walk.finish()


def verify_chain_pages(pages: Iterable[Mapping[str, Any]], origin: str) -> Report:
    """GET /agents/{handle}/chain pages, in order (the first may start after seq 0)."""
    report: Report | None = None
    walk: ChainWalk | None = None
    page: Mapping[str, Any] = {}
    for page in pages:
        _check_canon(page, origin, "chain")
        _need(isinstance(page.get("agent"), str) and isinstance(page.get("records"), list), origin, "not a chain page")
        head = _check_head(page.get("head"), origin)
        if walk is None:
            start = GENESIS if page.get("after_seq") == 0 else None
            report = Report([f"chain of agent {page['agent']} from {origin}",
                             f"published head: seq {head['seq']}, chain_hash {head['chain_hash']}"], subject=page["agent"])
            walk = ChainWalk(report, page["agent"], keys_of(page.get("keys"), origin), start)
            if start is None:
                report.check("start", None, f"the walk starts after seq {page.get('after_seq')}: the link to seq {page.get('after_seq')} is not checked")
        if page["agent"] != walk.agent:
            raise UnusableInput(f"a later page is of agent {page['agent']}, not {walk.agent}")
        walk.keys = keys_of(page.get("keys"), origin)
        walk.require_content = page.get("payloads") is not False
        for record in page["records"]:
            walk.add(record)
    if report is None or walk is None:
        raise UnusableInput(f"{origin}: no chain page")
    _finish_walk(report, walk)
    if page.get("has_more"):
        report.check("head", None, f"stopped before the head (seq {page['head']['seq']}): this page has more")
    else:
        _head_check(report, walk, page["head"], "chain's head")
    return report


def verify_proof(bundle: Mapping[str, Any], origin: str, vkey: Verifier | None, vkey_from: str) -> Report:
    """A proof bundle (GET /v1/proof/{id}): its record, and its inclusion in the global log."""
    _check_canon(bundle, origin, "proof")
    agent = bundle.get("agent")
    _need(isinstance(agent, dict) and isinstance(agent.get("handle"), str), origin, "the proof names no agent")
    head = _check_head(agent.get("head"), origin)
    keys = keys_of([bundle["key"]], origin) if bundle.get("key") else {}
    record = bundle.get("record")
    entry = record.get("entry", {}) if isinstance(record, dict) else {}
    seq_text = entry.get("seq") if isinstance(entry, dict) else None
    seq = int(seq_text) if isinstance(seq_text, str) and _SEQ.fullmatch(seq_text) else None
    report = Report([f"proof bundle of {bundle.get('id')} (agent {agent['handle']}) from {origin}"], subject=agent["handle"])
    walk = ChainWalk(report, agent["handle"], keys, GENESIS if seq == 1 else None)
    walk.add(record if isinstance(record, dict) else json.dumps(record))
    _finish_walk(report, walk)
    if seq != 1:
        report.check("prev_hash_link", None, f"the link to seq {(seq or 1) - 1} is not checked from a proof alone: verify the chain for that")
    if seq is not None:
        ok = seq < head["seq"] or (seq == head["seq"] and walk.last is not None and walk.last.chain_hash == head["chain_hash"])
        report.check("head", ok, f"the record (seq {seq}) is within the agent's published head (seq {head['seq']})" if ok
                     else f"the record (seq {seq}) is not covered by the published head (seq {head['seq']}, chain_hash {head['chain_hash']})")
    _inclusion_check(report, bundle, entry if isinstance(entry, dict) else {}, vkey, vkey_from)
    return report


def _inclusion_check(report: Report, bundle: Mapping[str, Any], entry: Mapping[str, Any], vkey: Verifier | None, vkey_from: str) -> None:
    proof = bundle.get("inclusion_proof")
    if proof is None:
        report.check("inclusion", None, "not in the global log yet (inclusion_proof is null)")
        return
    where = f"{bundle.get('id')} log index {proof.get('log_index') if isinstance(proof, dict) else '?'}"
    try:
        if not isinstance(proof, dict):
            raise ProofError("inclusion_proof is not an object")
        checkpoint = open_checkpoint(proof["checkpoint"], vkey)
        hashes = [base64.b64decode(h, validate=True) for h in proof["hashes"]]
        leaf = leaf_hash(canonical_text_of_read(dict(entry)).encode("utf-8"))
        root = root_from_inclusion(proof["log_index"], proof["tree_size"], leaf, hashes)
        if proof["tree_size"] != checkpoint.size:
            raise ProofError(f"tree_size {proof['tree_size']} is not the checkpoint's size {checkpoint.size}")
        if root != checkpoint.root:
            raise ProofError("the chain entry does not lead through hashes to the checkpoint's root")
        if "tlog_proof" in proof:
            tlog = parse_tlog_proof(proof["tlog_proof"])
            if (tlog.index, list(tlog.hashes), tlog.checkpoint_note) != (proof["log_index"], hashes, proof["checkpoint"]):
                raise ProofError("tlog_proof is not the same proof")
    except (ProofError, NoteError, KeyError, TypeError, ValueError, MissingCryptography) as exc:
        report.check("inclusion", False, "the record is not proven in the global log", [Failure("inclusion", where, str(exc))])
        return
    signed = f"checkpoint signed by {vkey.name} (vkey {vkey_from})" if vkey else "the checkpoint's signature was not checked (no vkey)"
    report.check("inclusion", True, f"the record is leaf {proof['log_index']} of the tree of size {proof['tree_size']}; {signed}")


ConsistencyFetcher = Callable[[int, int], list[bytes]]


def pinned_checkpoint_check(
    report: Report, bundle: Mapping[str, Any], pins: list[str], vkey: Verifier | None,
    consistency: ConsistencyFetcher | None,
) -> None:
    """--pin <checkpoint file>: the log the bundle's checkpoint describes must extend each pinned
    checkpoint (RFC 9162 consistency proof fetched from the service when the source is a URL)."""
    proof = bundle.get("inclusion_proof")
    failures: list[Failure] = []
    for index, note in enumerate(pins, start=1):
        where = f"pinned checkpoint {index}"
        try:
            if not isinstance(proof, dict):
                raise ProofError("the bundle has no inclusion proof, so no checkpoint to compare with")
            pinned = open_checkpoint(note, vkey)
            latest = open_checkpoint(proof["checkpoint"], vkey)
            if pinned.origin != latest.origin:
                raise ProofError(f"pinned origin {pinned.origin} is not the log's {latest.origin}")
            if pinned.size > latest.size:
                raise ProofError(f"the log (size {latest.size}) is behind the pinned checkpoint (size {pinned.size})")
            if pinned.size == latest.size:
                verify_consistency(pinned.size, latest.size, pinned.root, latest.root, [])
            elif consistency is None:
                raise ProofError("a consistency proof needs the service: give the proof bundle's URL")
            else:
                verify_consistency(pinned.size, latest.size, pinned.root, latest.root, consistency(pinned.size, latest.size))
        except (ProofError, NoteError, MissingCryptography, KeyError, TypeError, ValueError) as exc:
            failures.append(Failure("pinned_checkpoint", where, str(exc)))
    report.check("pinned_checkpoint", not failures,
                 f"{len(pins)} pinned checkpoint(s) extended by the log: {len(pins) - len(failures)} of {len(pins)}", failures)
