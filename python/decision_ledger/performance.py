"""`python -m decision_ledger verify --performance <agent URL>`: whether an agent's published
performance reports (model, and broker when it has one) are bound to that agent, the checks
`ledger verify --performance` makes before it computes (docs/python.md):

- the report and its inputs bundle (GET /v1/agents/{handle}/performance/inputs, perf_inputs_v1)
  name the agent of the URL and the portfolio asked, and the same synthetic label; the bundle is
  of the report's through_seq and as_of;
- the agent's chain as served (GET /v1/agents/{handle}/chain, page by page) verifies from seq 1
  through the report's through_seq (canon_v1 §5 checks 1-5, verify.py);
- every record line of the bundle is the chain's record at its chain_seq (id, type, recorded_at,
  content text hashing to content_hash), and the lines are exactly the chain's records of the kinds
  the report applies through through_seq (none left out, none added);
- the record at through_seq is the one its proof bundle holds, in the global log where integrated.

It does NOT compute the figures again: only `ledger verify --performance` (the TypeScript
verifier) recomputes every figure from the inputs. Exit codes: 0 pass, 1 a check failed (naming the
record), 2 unusable input (a bound passed, an answer not of the documented form, no report).
"""
from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from .sources import _document, _get, _lines, _pages, published_vkey
from .verify import UnusableInput, nested_deeper_than, verify_chain_pages, verify_proof, MAX_JSON_NESTING, Report

APPLIED_TYPES = {"model": ("decision",), "broker": ("execution", "activity")}
"""The record types a portfolio's report applies (the bundle's record lines, docs/perf_v1.md §8)."""

CHAIN_PAGE = 1000
_SEQ = re.compile(r"[1-9][0-9]{0,15}")
NOT_RECOMPUTED = "the figures are not computed again here: `ledger verify --performance` does that"


class Unbound(Exception):
    """The inputs are not the agent's: one line naming the record or the label (exit 1)."""


@dataclass(frozen=True)
class RecordLine:
    seq: Any
    id: str
    type: str
    recorded_at: str
    content_hash: str | None


@dataclass(frozen=True)
class ChainRecord:
    seq: int
    id: str
    type: str
    recorded_at: str
    content_hash: str
    chain_hash: str


@dataclass
class Bundle:
    header: dict[str, Any]
    records: list[RecordLine]
    actions: int = 0
    closes: int = 0


def agent_of(url: str) -> tuple[str, str] | None:
    """The service's root and the agent's handle, from `<site>/agents/<handle>` or `<api>/v1/agents/<handle>...`."""
    parts = urllib.parse.urlsplit(url)
    match = re.match(r"^(.*?)(?:/v1)?/agents/([^/?#]+)", parts.path)
    if parts.scheme not in ("http", "https") or match is None:
        return None
    return f"{parts.scheme}://{parts.netloc}{match.group(1)}", urllib.parse.unquote(match.group(2))


# ---------------------------------------------------------------------------------------------
# Reading


def _json_line(text: str, n: int, origin: str) -> dict[str, Any]:
    if nested_deeper_than(text):
        raise UnusableInput(f"{origin} line {n}: nests JSON deeper than {MAX_JSON_NESTING} levels")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UnusableInput(f"{origin} line {n}: not JSON") from exc
    if not isinstance(value, dict):
        raise UnusableInput(f"{origin} line {n}: not a JSON object")
    return value


def _record_line(value: dict[str, Any]) -> RecordLine:
    content = value.get("content")
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest() if isinstance(content, str) else None
    return RecordLine(value.get("chain_seq"), str(value.get("id")), str(value.get("type")), str(value.get("recorded_at")), digest)


def read_bundle(lines: Iterable[str], origin: str) -> Bundle:
    """An inputs bundle as it streams: a perf_inputs_v1 header, the lines, an end line whose counts
    match. Only what the binding needs is kept (each record's content hash, not its content)."""
    bundle: Bundle | None = None
    end: dict[str, Any] | None = None
    for n, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if not text.strip():
            continue
        if end is not None:
            raise UnusableInput(f"{origin} line {n}: after the end line")
        value = _json_line(text, n, origin)
        if bundle is None:
            if value.get("object") != "performance_inputs" or value.get("format") != "perf_inputs_v1":
                raise UnusableInput(f"{origin}: line 1 is not a perf_inputs_v1 header")
            bundle = Bundle(value, [])
        elif value.get("kind") == "record":
            bundle.records.append(_record_line(value))
        elif value.get("kind") == "corporate_action":
            bundle.actions += 1
        elif value.get("kind") == "close":
            bundle.closes += 1
        elif value.get("kind") == "end":
            end = value
        else:
            raise UnusableInput(f"{origin} line {n}: unknown kind {json.dumps(value.get('kind'))}")
    if bundle is None:
        raise UnusableInput(f"{origin}: empty bundle")
    if end is None:
        raise UnusableInput(f"{origin}: no end line: the bundle was cut short")
    held = (len(bundle.records), bundle.actions, bundle.closes)
    if (end.get("records"), end.get("corporate_actions"), end.get("closes")) != held:
        raise UnusableInput(f"{origin}: the end line counts {end.get('records')} records, {end.get('corporate_actions')} actions, "
                            f"{end.get('closes')} closes; the bundle holds {held[0]}, {held[1]}, {held[2]}")
    return bundle


def _get_json(url: str) -> dict[str, Any]:
    with _get(url) as response:
        return _document(response.read().decode("utf-8", "replace"), url)


def _get_bundle(url: str) -> Bundle:
    with _get(url) as response:
        return read_bundle(_lines(response), url)


# ---------------------------------------------------------------------------------------------
# Binding


def labels_problem(handle: str, portfolio: str, report: dict[str, Any], header: dict[str, Any]) -> str | None:
    """Why the report and its inputs are not of this agent and portfolio with one synthetic label, or None."""
    if report.get("agent") != handle:
        return f"the report is of agent {json.dumps(report.get('agent'))}, not {json.dumps(handle)} whose URL was given"
    if report.get("portfolio") != portfolio:
        return f"the report is of the {json.dumps(report.get('portfolio'))} portfolio, not {json.dumps(portfolio)} as asked"
    if header.get("agent") != handle:
        return f"the inputs are of agent {json.dumps(header.get('agent'))}, not {json.dumps(handle)} whose report this is"
    if header.get("portfolio") != portfolio:
        return f"the inputs are of the {json.dumps(header.get('portfolio'))} portfolio, the report of {json.dumps(portfolio)}"
    if report.get("synthetic") != header.get("synthetic"):
        return f"the report says synthetic: {json.dumps(report.get('synthetic'))}, its inputs synthetic: {json.dumps(header.get('synthetic'))}"
    return None


def _summary(raw: Any) -> ChainRecord | None:
    entry = raw.get("entry") if isinstance(raw, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("seq"), str) or not _SEQ.fullmatch(entry["seq"]):
        return None
    return ChainRecord(int(entry["seq"]), _text(entry.get("id")), _text(entry.get("type")), _text(entry.get("recorded_at")),
                       _text(entry.get("content_hash")), _text(raw.get("chain_hash")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _pages_through(pages: Iterable[dict[str, Any]], through: int, kept: dict[int, ChainRecord]) -> Iterator[dict[str, Any]]:
    """The chain's pages cut at through_seq, each record up to it summarised into `kept`; no page is
    asked past the one holding it."""
    highest = 0
    for page in pages:
        records = page.get("records") if isinstance(page.get("records"), list) else []
        shown = []
        for raw in records:
            summary = _summary(raw)
            if summary is not None and summary.seq > through:
                continue
            if summary is not None:
                kept[summary.seq] = summary
                highest = max(highest, summary.seq)
            shown.append(raw)
        cut = len(shown) < len(records)
        yield {**page, "records": shown, "has_more": True} if cut else page
        if cut or highest >= through:
            return


def chain_through(root: str, handle: str, through: int) -> tuple[Report, dict[int, ChainRecord]]:
    """The agent's chain from seq 1 through `through`, verified, with its records summarised."""
    url = f"{root}/v1/agents/{urllib.parse.quote(handle, safe='')}/chain?limit={CHAIN_PAGE}"
    first = _get_json(url)
    if first.get("object") != "chain" or first.get("agent") != handle or first.get("after_seq") != 0:
        raise UnusableInput(f"{url} is not the first page of the chain of agent {json.dumps(handle)}")
    kept: dict[int, ChainRecord] = {}
    report = verify_chain_pages(_pages_through(_pages(first, url), through, kept), url)
    return report, kept


def _where(seq: Any, record_id: str) -> str:
    return f"record seq {seq} ({record_id})"


def _line_problem(line: RecordLine, chain: ChainRecord | None, types: tuple[str, ...], portfolio: str) -> str | None:
    at = _where(line.seq, line.id)
    if chain is None:
        return f"{at} of the inputs is not in the agent's chain"
    if chain.id != line.id:
        return f"{at} of the inputs: the chain's record at seq {chain.seq} is {chain.id}"
    if chain.type != line.type:
        return f"{at} of the inputs is of type {json.dumps(line.type)}, the chain's of type {json.dumps(chain.type)}"
    if line.type not in types:
        return f"{at} of the inputs is of type {json.dumps(line.type)}: the {portfolio} report applies only {' and '.join(types)} records"
    if chain.recorded_at != line.recorded_at:
        return f"{at} of the inputs says recorded_at {line.recorded_at}, the chain {chain.recorded_at}"
    if line.content_hash != chain.content_hash:
        return f"{at} of the inputs: its content hashes to {line.content_hash or '(no content text)'}, the chain's content_hash is {chain.content_hash}"
    return None


def _left_out(chain: dict[int, ChainRecord], types: tuple[str, ...], start: int, stop: int) -> str | None:
    for seq in range(start, stop):
        left = chain.get(seq)
        if left is not None and left.type in types:
            return f"{_where(seq, left.id)}, the chain's {left.type}, is not in the inputs: left out"
    return None


def records_problem(lines: list[RecordLine], chain: dict[int, ChainRecord], portfolio: str, through: int) -> str | None:
    """Why the bundle's record lines are not exactly the chain's records of the report's types
    through through_seq, in chain order, each the same record (the first at fault), or None."""
    types = APPLIED_TYPES[portfolio]
    previous = 0
    for line in lines:
        seq = line.seq
        if not isinstance(seq, int) or isinstance(seq, bool) or seq <= previous:
            return f"{_where(seq, line.id)} of the inputs comes after seq {previous}: a record added, repeated or out of chain order"
        if seq > through:
            return f"{_where(seq, line.id)} of the inputs is past the report's through_seq {through}"
        problem = _left_out(chain, types, previous + 1, seq) or _line_problem(line, chain.get(seq), types, portfolio)
        if problem:
            return problem
        previous = seq
    return _left_out(chain, types, previous + 1, through + 1)


def first_failure(report: Report) -> str:
    """The first failure of a verification, as one line naming where."""
    if report.failures:
        f = report.failures[0]
        return f"{f.name} at {f.where}: {f.detail}"
    for check in report.extra:
        if check.ok is False:
            return f"{check.name} at {check.failures[0].where}: {check.failures[0].detail}" if check.failures else f"{check.name}: {check.summary}"
    return "a check failed"


def log_binding(root: str, last: ChainRecord) -> tuple[bool | None, str]:
    """The record at through_seq in the global log: its proof bundle holds the chain's record and
    verifies (inclusion under a checkpoint signed by the published log key); a note before it is
    integrated."""
    api = f"{root}/v1"
    at = _where(last.seq, last.id)
    url = f"{api}/proof/{urllib.parse.quote(last.id, safe='')}"
    bundle = _get_json(url)
    record = bundle.get("record")
    proven = record.get("chain_hash") if isinstance(record, dict) else None
    if proven != last.chain_hash:
        return False, f"{at}: its proof bundle holds chain_hash {proven}, the chain {last.chain_hash}"
    vkey = published_vkey(api)
    report = verify_proof(bundle, url, vkey, f"published on {api}/transparency" if vkey else "none")
    if not report.ok:
        return False, f"{at}: its proof bundle does not verify: {first_failure(report)}"
    inclusion = next((c for c in report.extra if c.name == "inclusion"), None)
    if inclusion is None or inclusion.ok is not True:
        return None, f"{at} is not in the global log yet (its proof bundle has no inclusion proof: look again shortly); the chain is verified without it"
    return True, f"{at}: {inclusion.summary}"


# ---------------------------------------------------------------------------------------------
# The run


def _report_and_bundle(api: str, portfolio: str) -> tuple[dict[str, Any], Bundle] | None:
    report = _get_json(f"{api}?portfolio={portfolio}")
    if report.get("status") != "computed":
        return None
    bundle = _get_bundle(f"{api}/inputs?portfolio={portfolio}")
    h = bundle.header
    if (h.get("through_seq"), h.get("as_of")) != (report.get("through_seq"), report.get("as_of")):
        report = _get_json(f"{api}?portfolio={portfolio}")  # it moved on between the two reads
    if (h.get("through_seq"), h.get("as_of")) != (report.get("through_seq"), report.get("as_of")):
        raise Unbound(f"the inputs are of the report through seq {h.get('through_seq')}, as of {h.get('as_of')}; "
                      f"the published one is through seq {report.get('through_seq')}, as of {report.get('as_of')}")
    return report, bundle


def _bind(root: str, handle: str, portfolio: str, report: dict[str, Any], bundle: Bundle, out: list[str]) -> None:
    problem = labels_problem(handle, portfolio, report, bundle.header)
    if problem:
        raise Unbound(problem)
    through = bundle.header.get("through_seq")
    if not isinstance(through, int) or isinstance(through, bool) or through < 1:
        raise UnusableInput(f"the inputs' through_seq {json.dumps(through)} is not a chain seq")
    chain_report, chain = chain_through(root, handle, through)
    if not chain_report.ok:
        raise Unbound(f"the agent's chain does not verify through seq {through}: {first_failure(chain_report)}")
    problem = records_problem(bundle.records, chain, portfolio, through)
    if problem:
        raise Unbound(problem)
    last = chain.get(through)
    if last is None:
        raise Unbound(f"the agent's chain holds no record at the report's through_seq {through}")
    ok, line = log_binding(root, last)
    if ok is False:
        raise Unbound(f"the global log: {line}")
    types = " and ".join(APPLIED_TYPES[portfolio])
    out.append(f"  ok   chain of {handle}: seq 1 to {through} verify (canon_v1 §5 checks 1-5); the {len(bundle.records)} input records are "
               f"exactly its {types} records through seq {through}, each with the chain's id, type, recorded_at and content hash")
    out.append(f"  {'ok  ' if ok else 'note'} log: {line}")


def verify_performance(source: str) -> tuple[int, list[str]]:
    """The binding of the agent's reports to the agent: (exit code, lines to print). UnusableInput
    propagates (exit 2)."""
    agent = agent_of(source)
    if agent is None:
        raise UnusableInput(f"{source} is not an agent's URL (<site>/agents/<handle> or <api>/v1/agents/<handle>)")
    root, handle = agent
    api = f"{root}/v1/agents/{urllib.parse.quote(handle, safe='')}/performance"
    out = [f"performance reports of agent {handle} from {root}: their inputs bound to the agent ({NOT_RECOMPUTED})"]
    verified = 0
    for portfolio in ("model", "broker"):
        try:
            found = _report_and_bundle(api, portfolio)
            if found is None:
                out.append(f"  note performance {portfolio}: no report to verify")
                continue
            report, bundle = found
            h = bundle.header
            out.append(f"  performance {portfolio}: {h.get('method')}, through seq {h.get('through_seq')}, as of {h.get('as_of')}; "
                       f"{len(bundle.records)} records, {bundle.actions} corporate actions, {bundle.closes} closes")
            _bind(root, handle, portfolio, report, bundle, out)
        except Unbound as exc:
            out.append(f"  FAIL performance {portfolio}: {exc}")
            out.append(f"verdict: FAIL: the {portfolio} report's inputs are not bound to agent {handle}; the line above says where")
            return 1, out
        out.append(f"  ok   performance {portfolio}: its inputs are the agent's own (labels the report's, records the chain's)")
        verified += 1
    if verified == 0:
        raise UnusableInput("nothing to verify: the agent has no performance report")
    out.append(f"verdict: PASS: {verified} performance report(s) of {handle} bound to its chain ({NOT_RECOMPUTED})")
    return 0, out
