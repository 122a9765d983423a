"""The binding of an inputs bundle to the agent (decision_ledger.performance), as pure data: a
broker report's record lines are exactly the chain's executions and activities through through_seq
(its decisions are not inputs), each way a line differs from the chain's record is named with its
seq and id as `ledger verify --performance` names it, the labels are compared, and a bundle cut
short or miscounted is unusable."""
from __future__ import annotations

import hashlib
import json

import pytest

from decision_ledger.performance import ChainRecord, RecordLine, agent_of, labels_problem, read_bundle, records_problem
from decision_ledger.verify import UnusableInput

TYPES = ("decision", "execution", "activity", "execution", "decision", "activity")


def _content(seq: int) -> str:
    return f'{{"canon":"canon_v1","n":"{seq}"}}'


CHAIN = {i + 1: ChainRecord(i + 1, f"rec_{i + 1}", t, f"2026-01-0{i + 1}T00:00:00.000Z",
                            hashlib.sha256(_content(i + 1).encode()).hexdigest(), "c" * 64) for i, t in enumerate(TYPES)}


def _line(at: int, /, **change: object) -> RecordLine:
    c = CHAIN[at]
    fields = {"seq": at, "id": c.id, "type": c.type, "recorded_at": c.recorded_at, "content_hash": c.content_hash, **change}
    return RecordLine(**fields)  # type: ignore[arg-type]


def test_a_broker_reports_lines_bind_with_the_decisions_left_aside() -> None:
    assert records_problem([_line(s) for s in (2, 3, 4, 6)], CHAIN, "broker", 6) is None
    assert records_problem([_line(s) for s in (1, 5)], CHAIN, "model", 6) is None


@pytest.mark.parametrize(("lines", "expected"), [
    ([2, 4, 6], "record seq 3 (rec_3), the chain's activity, is not in the inputs: left out"),
    ([2, 3, 4], "record seq 6 (rec_6), the chain's activity, is not in the inputs: left out"),
    ([1, 2, 3, 4, 6], 'record seq 1 (rec_1) of the inputs is of type "decision": the broker report applies only execution and activity records'),
    ([2, 3, 3, 4, 6], "record seq 3 (rec_3) of the inputs comes after seq 3: a record added, repeated or out of chain order"),
])
def test_a_record_left_out_added_or_repeated_is_named(lines: list[int], expected: str) -> None:
    assert records_problem([_line(s) for s in lines], CHAIN, "broker", 6) == expected


@pytest.mark.parametrize(("change", "expected"), [
    ({"id": "rec_99"}, "record seq 3 (rec_99) of the inputs: the chain's record at seq 3 is rec_3"),
    ({"type": "execution"}, 'record seq 3 (rec_3) of the inputs is of type "execution", the chain\'s of type "activity"'),
    ({"recorded_at": "2026-02-01T00:00:00.000Z"}, "record seq 3 (rec_3) of the inputs says recorded_at 2026-02-01T00:00:00.000Z, the chain 2026-01-03T00:00:00.000Z"),
    ({"content_hash": "0" * 64}, f"record seq 3 (rec_3) of the inputs: its content hashes to {'0' * 64}, the chain's content_hash is {CHAIN[3].content_hash}"),
    ({"seq": 7}, "record seq 7 (rec_3) of the inputs is past the report's through_seq 6"),
])
def test_a_line_not_the_chains_record_is_named(change: dict[str, object], expected: str) -> None:
    lines = [_line(s, **change) if s == 3 else _line(s) for s in (2, 3, 4, 6)]
    assert records_problem(lines, CHAIN, "broker", 6) == expected


def test_the_labels() -> None:
    report = {"agent": "bot", "portfolio": "model", "synthetic": True}
    header = {"agent": "bot", "portfolio": "model", "synthetic": True}
    assert labels_problem("bot", "model", report, header) is None
    assert labels_problem("bot", "model", {**report, "agent": "other"}, header) == 'the report is of agent "other", not "bot" whose URL was given'
    assert labels_problem("bot", "model", report, {**header, "agent": "other"}) == 'the inputs are of agent "other", not "bot" whose report this is'
    assert labels_problem("bot", "model", report, {**header, "synthetic": False}) == "the report says synthetic: true, its inputs synthetic: false"
    assert agent_of("http://host:8080/v1/agents/bot/performance?portfolio=model") == ("http://host:8080", "bot")
    assert agent_of("https://host/agents/bot") == ("https://host", "bot") and agent_of("https://host/v1/export") is None


def _bundle(*lines: dict[str, object]) -> list[str]:
    return [json.dumps(l) + "\n" for l in lines]


HEADER = {"object": "performance_inputs", "format": "perf_inputs_v1", "agent": "bot", "through_seq": 1}
RECORD = {"kind": "record", "type": "decision", "chain_seq": 1, "id": "dec_1", "recorded_at": "t", "content": "{}", "observation": None}


def test_a_bundle_is_read_for_its_records_content_hashes() -> None:
    bundle = read_bundle(_bundle(HEADER, RECORD, {"kind": "close"}, {"kind": "end", "records": 1, "corporate_actions": 0, "closes": 1}), "b")
    assert bundle.records == [RecordLine(1, "dec_1", "decision", "t", hashlib.sha256(b"{}").hexdigest())] and bundle.closes == 1


@pytest.mark.parametrize(("lines", "message"), [
    (_bundle(HEADER, RECORD), "no end line: the bundle was cut short"),
    (_bundle(HEADER, RECORD, {"kind": "end", "records": 2, "corporate_actions": 0, "closes": 0}), "the end line counts 2 records"),
    (_bundle(RECORD), "line 1 is not a perf_inputs_v1 header"),
    (["[" * 200 + "]" * 200 + "\n"], "nests JSON deeper than 128 levels"),
])
def test_a_bundle_not_of_the_documented_form_is_unusable(lines: list[str], message: str) -> None:
    with pytest.raises(UnusableInput, match=message.replace("(", r"\(")):
        read_bundle(lines, "b")
