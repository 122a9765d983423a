"""The sync and asyncio clients against a real service on SQLite and PostgreSQL: exactly-once
recording under injected faults, local signing compared with the assertion endpoint, typed errors,
every public read, the export streamed and verified."""
from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any, Iterator

import pytest
from conftest import skip_or_fail
from fault_proxy import BAD_GATEWAY_AFTER_COMMIT, DROP_AFTER_COMMIT, FaultProxy, answer
from service import LEDGER, NODE, Service, postgres_reachable

from decision_ledger import (
    AsyncLedgerClient, LedgerApiError, LedgerClient, LedgerValidationError, RetryPolicy, decision_payload,
)

FAST = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)
HANDLES = itertools.count(1)
FIELDS = {"symbol": "AAPL", "action": "BUY", "quantity": "10", "confidence": "0.72", "thesis": "Services margin."}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    if NODE is None or not (LEDGER.parent.parent / "dist").is_dir():
        skip_or_fail("node and the compiled build (npm run build) are needed")
    if request.param == "postgres" and not postgres_reachable():
        skip_or_fail("PostgreSQL is not reachable on 127.0.0.1:5432")
    svc = Service(request.param)
    try:
        svc.start()
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def agent(service: Service, request: pytest.FixtureRequest) -> tuple[str, str]:
    handle = f"py{next(HANDLES)}-" + request.node.name.split("[")[0].replace("test_", "").replace("_", "-")[:20]
    return handle, service.create_agent(handle)


@pytest.fixture
def proxy(service: Service) -> Iterator[FaultProxy]:
    p = FaultProxy(service.port)
    yield p
    p.close()


def chain_ids(service: Service, handle: str) -> list[str]:
    page = LedgerClient(service.base).get_chain(handle, limit=2000)
    return [r["entry"]["id"] for r in page["records"]]


def test_exactly_once_when_the_answer_is_lost(service: Service, agent: tuple[str, str], proxy: FaultProxy) -> None:
    handle, secret = agent
    proxy.script = [DROP_AFTER_COMMIT]
    decision = LedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS)
    assert decision["replayed"] is True
    assert chain_ids(service, handle) == [decision["id"]]
    assert len(proxy.seen) == 2
    assert {s.headers["idempotency-key"] for s in proxy.seen} == {decision["idempotency_key"]}
    assert proxy.seen[0].body == proxy.seen[1].body


def test_exactly_once_async_when_the_answer_is_lost(service: Service, agent: tuple[str, str], proxy: FaultProxy) -> None:
    handle, secret = agent
    proxy.script = [DROP_AFTER_COMMIT, DROP_AFTER_COMMIT]
    decision = asyncio.run(AsyncLedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS))
    assert decision["replayed"] is True
    assert chain_ids(service, handle) == [decision["id"]]
    assert len(proxy.seen) == 3 and len({s.headers["idempotency-key"] for s in proxy.seen}) == 1


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_exactly_once_when_a_gateway_answers_502_after_the_commit(
        service: Service, agent: tuple[str, str], proxy: FaultProxy, asynchronous: bool) -> None:
    handle, secret = agent
    proxy.script = [BAD_GATEWAY_AFTER_COMMIT, BAD_GATEWAY_AFTER_COMMIT]
    if asynchronous:
        decision = asyncio.run(AsyncLedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS))
    else:
        decision = LedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS)
    assert decision["replayed"] is True and chain_ids(service, handle) == [decision["id"]]
    assert len(proxy.seen) == 3 and len({s.body for s in proxy.seen}) == 1


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_retries_5xx_409_in_flight_and_429(service: Service, agent: tuple[str, str], proxy: FaultProxy, asynchronous: bool) -> None:
    handle, secret = agent
    proxy.script = [answer(503, "internal_error"), answer(409, "idempotency_request_in_flight"),
                    answer(429, "rate_limit_exceeded", "retry-after: 1\r\n"), DROP_AFTER_COMMIT]
    started = time.monotonic()
    if asynchronous:
        decision = asyncio.run(AsyncLedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS))
    else:
        decision = LedgerClient(proxy.url, secret, retry=FAST).record_decision(FIELDS)
    assert time.monotonic() - started >= 1.0  # Retry-After was honoured
    assert decision["replayed"] is True and chain_ids(service, handle) == [decision["id"]]
    assert len(proxy.seen) == 5 and len({s.headers["idempotency-key"] for s in proxy.seen}) == 1


def test_gives_up_with_the_key_and_finishes_later(service: Service, agent: tuple[str, str], proxy: FaultProxy) -> None:
    handle, secret = agent
    proxy.script = [DROP_AFTER_COMMIT] + [answer(503, "internal_error")] * 2
    client = LedgerClient(proxy.url, secret, retry=RetryPolicy(max_attempts=3, base_delay=0.01))
    with pytest.raises(LedgerApiError) as caught:
        client.record_decision(FIELDS)
    error = caught.value
    assert (error.status, error.code, error.attempts) == (503, "internal_error", 3)
    finished = client.record_decision(FIELDS, idempotency_key=error.idempotency_key)
    assert finished["replayed"] is True and chain_ids(service, handle) == [finished["id"]]


def test_typed_errors(service: Service, agent: tuple[str, str], proxy: FaultProxy) -> None:
    _, secret = agent
    client = LedgerClient(service.base, secret, retry=FAST)
    with pytest.raises(LedgerValidationError) as local:
        client.record_decision({**FIELDS, "confidence": "1.7"})
    assert (local.value.code, local.value.param, local.value.status) == ("invalid_request", "confidence", 0)
    with pytest.raises(LedgerApiError) as remote:
        client.record_decision({**FIELDS, "occurred_at": "2099-01-01T00:00:00Z"})
    error = remote.value
    assert (error.status, error.code, error.param) == (400, "invalid_request", "occurred_at")
    assert error.type and error.request_id
    with pytest.raises(LedgerApiError) as unauthorised:
        LedgerClient(service.base, "dl_live_nope_nope", retry=FAST).record_decision(FIELDS)
    assert (unauthorised.value.status, unauthorised.value.code) == (401, "invalid_api_key")
    key = "idem-reused-" + str(time.time_ns())
    client.record_decision(FIELDS, idempotency_key=key)
    with pytest.raises(LedgerApiError) as reused:
        client.record_decision({**FIELDS, "quantity": "11"}, idempotency_key=key)
    assert (reused.value.code, reused.value.type, reused.value.param) == ("idempotency_key_reused", "idempotency_error", "Idempotency-Key")
    with pytest.raises(LedgerApiError) as missing:
        client.get_proof("dec_01NOTHINGHERE0000000000000")
    assert missing.value.status == 404 and missing.value.code == "not_found"


def test_local_signing_matches_the_assertion_endpoint(service: Service, agent: tuple[str, str]) -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        skip_or_fail("signing needs python3-cryptography")
    handle, secret = agent
    client = LedgerClient(service.base, secret, retry=FAST)
    signer = client.create_signer(handle, "python test signer")
    fields: dict[str, Any] = {**FIELDS, "occurred_at": "2026-01-01T00:00:00Z", "metadata": {"z": 1.50, "é": [1e2]}}
    fields["occurred_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    nonce = "py-nonce-" + str(time.time_ns())
    assertion = client.assert_decision({**fields, "nonce": nonce})
    payload, content_hash = decision_payload(handle, fields, nonce)
    assert payload.decode("utf-8") == assertion["payload"]
    recorded = client.record_decision(fields, signer=signer, idempotency_key=nonce)
    assert recorded["verification"]["agent_signed"] is True
    assert recorded["verification"]["content_hash"] == content_hash
    again = client.record_decision(fields, signer=signer, idempotency_key=nonce)  # same signed bytes: replayed
    assert again["replayed"] is True and again["id"] == recorded["id"]
    service.wait_integrated(1)
    deadline = time.monotonic() + 20
    while client.get_proof(recorded["id"]).get("inclusion_proof") is None and time.monotonic() < deadline:
        time.sleep(0.2)
    report = client.verify_record(recorded["id"])
    assert report.ok and report.tallies["signature"].checked == 1, "\n".join(report.lines())


def test_public_reads_sync_and_async(service: Service, agent: tuple[str, str]) -> None:
    handle, secret = agent
    client = LedgerClient(service.base, secret, retry=FAST)
    ids = [client.record_decision({**FIELDS, "quantity": str(n)})["id"] for n in range(1, 4)]
    assert client.get_agent(handle)["handle"] == handle
    assert [r["entry"]["id"] for r in client.get_chain(handle)["records"]] == ids
    assert client.get_proof(ids[0])["id"] == ids[0]
    assert [r["entry"]["id"] for r in client.list_ledger(agent=handle)["data"]] == ids[::-1]
    assert "log" in client.get_transparency()
    lines = list(client.export_lines(handle))
    assert len(lines) == 4 and '"object":"export"' in lines[0]
    assert client.verify_agent(handle).ok
    assert isinstance(client.get_performance(handle), dict)

    async def reads() -> None:
        aclient = AsyncLedgerClient(service.base, secret, retry=FAST)
        assert (await aclient.get_agent(handle))["handle"] == handle
        assert [r["entry"]["id"] for r in (await aclient.get_chain(handle))["records"]] == ids
        assert (await aclient.get_proof(ids[1]))["id"] == ids[1]
        assert [r["entry"]["id"] for r in (await aclient.list_ledger(agent=handle, limit=2))["data"]] == ids[:0:-1]
        assert "log" in await aclient.get_transparency()
        assert len([line async for line in aclient.export_lines(handle)]) == 4
        assert (await aclient.verify_agent(handle)).ok

    asyncio.run(reads())


def test_example_agent_loop(service: Service, agent: tuple[str, str]) -> None:
    import os
    import subprocess
    import sys

    from conftest import ROOT

    handle, secret = agent
    env = {**os.environ, "LEDGER_BASE_URL": service.base, "LEDGER_API_KEY": secret, "LEDGER_AGENT": handle,
           "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python_agent.py")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("signed=True") == 3
    assert done.stdout.count("client_order_id=lt_") == 3
    assert done.stdout.count(": verified; the record is leaf") == 3 and f"the whole chain of {handle}: verified" in done.stdout
    assert len(chain_ids(service, handle)) == 3


def test_pinned_checkpoint_consistency(service: Service, agent: tuple[str, str], tmp_path: Any,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    import base64
    import json as _json
    from pathlib import Path

    from decision_ledger.__main__ import main
    from decision_ledger.note import parse_checkpoint, split_note

    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:
        skip_or_fail("checkpoint signatures need python3-cryptography")
    handle, secret = agent
    client = LedgerClient(service.base, secret, retry=FAST)

    def integrated(record_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + 30
        while (proof := client.get_proof(record_id))["inclusion_proof"] is None:
            assert time.monotonic() < deadline, "not integrated"
            time.sleep(0.2)
        return proof

    first = client.record_decision(FIELDS)
    pinned_note = integrated(first["id"])["inclusion_proof"]["checkpoint"]
    pin = Path(tmp_path) / "pinned.checkpoint"
    pin.write_text(pinned_note)
    second = client.record_decision({**FIELDS, "quantity": "12"})
    bundle = integrated(second["id"])
    while parse_checkpoint(split_note(bundle["inclusion_proof"]["checkpoint"])[0]).size <= parse_checkpoint(split_note(pinned_note)[0]).size:
        time.sleep(0.2)
        bundle = client.get_proof(second["id"])
    capsys.readouterr()
    assert main(["verify", f"{service.base}/proof/{second['id']}", "--pin", str(pin)]) == 0
    assert "ok   pinned_checkpoint 1 pinned checkpoint(s) extended by the log: 1 of 1" in capsys.readouterr().out
    # A checkpoint of a forked log (another root at the pinned size), signed with the log's own key: refused.
    pinned = parse_checkpoint(split_note(pinned_note)[0])
    key_file = next(Path(service.dir).rglob("log-key.pem"))
    key = load_pem_private_key(key_file.read_bytes(), None)
    vkey = client.get_transparency()["log"]["vkey"]
    key_id = base64.b64decode(vkey.split("+", 2)[2])  # 0x01 || public key
    from decision_ledger.note import key_id as note_key_id

    body = f"{pinned.origin}\n{pinned.size}\n{base64.b64encode(bytes(32)).decode()}\n"
    signature = key.sign(body.encode())  # type: ignore[union-attr, call-arg]
    kid = note_key_id(pinned.origin, key_id[1:])
    forged = body + f"\n\u2014 {pinned.origin} {base64.b64encode(kid + signature).decode()}\n"
    pin.write_text(forged)
    assert main(["verify", f"{service.base}/proof/{second['id']}", "--pin", str(pin)]) == 1
    out = capsys.readouterr().out
    assert "FAIL pinned_checkpoint" in out and "consistency proof does not lead to the root of tree size" in out, out
    del _json
