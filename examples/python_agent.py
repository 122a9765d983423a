#!/usr/bin/env python3
"""An agent loop in Python: decide, record the decision exactly once (signed with the agent's own
key), stamp its link_token into the broker order's client_order_id, and later read the record's
proof and verify it offline. The broker here is a stand-in that prints the order it would send.

    LEDGER_BASE_URL=http://localhost:8080/v1 LEDGER_API_KEY=dl_live_... LEDGER_AGENT=demo-bot \\
      PYTHONPATH=python /usr/bin/python3 examples/python_agent.py
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from decimal import Decimal

from decision_ledger import LedgerClient, LedgerError, RetryPolicy


@dataclass
class PaperBroker:
    """Stands in for a broker SDK (Alpaca's submit_order, say): only the client_order_id matters here."""

    def submit_order(self, symbol: str, qty: Decimal, side: str, client_order_id: str) -> str:
        print(f"   order: {side} {qty} {symbol}, client_order_id={client_order_id}")
        return "order-" + client_order_id


def decide(tick: int) -> dict[str, object]:
    """The agent's model: here, a fixed rotation. Decimals stay exact (Decimal or str, never float)."""
    symbol = ("AAPL", "MSFT", "NVDA")[tick % 3]
    return {"symbol": symbol, "action": "BUY", "quantity": Decimal("10"), "confidence": "0.7",
            "thesis": f"Momentum signal on {symbol}.", "metadata": {"model": "example", "tick": tick}}


def main() -> None:
    client = LedgerClient(os.environ.get("LEDGER_BASE_URL", "http://localhost:8080/v1"),
                          os.environ["LEDGER_API_KEY"], retry=RetryPolicy(max_attempts=5))
    agent = os.environ.get("LEDGER_AGENT", "demo-bot")
    broker = PaperBroker()
    try:
        signer = client.create_signer(agent, "python example signer")  # needs python3-cryptography
        print(f"1. registered signing key {signer.key_id}")
    except ImportError as missing:
        signer = None
        print(f"1. unsigned decisions ({missing})")
    recorded = []
    for tick in range(3):
        decision = decide(tick)
        try:
            record = client.record_decision(decision, signer=signer)
        except LedgerError as error:  # typed: code, param, request_id; error.idempotency_key finishes it later
            print(f"   not recorded: {error}")
            continue
        print(f"2. recorded {record['id']} seq {record['verification']['chain_seq']}"
              f" signed={record['verification'].get('agent_signed', False)}")
        broker.submit_order(str(decision["symbol"]), Decimal(str(decision["quantity"])), "buy", record["link_token"])
        recorded.append(record["id"])
    for record_id in recorded:
        deadline = time.monotonic() + 30  # the global log integrates within about a second
        while client.get_proof(record_id)["inclusion_proof"] is None and time.monotonic() < deadline:
            time.sleep(0.25)
        report = client.verify_record(record_id)
        inclusion = next((c for c in report.extra if c.name == "inclusion"), None)
        print(f"3. proof of {record_id}: {'verified' if report.ok else 'FAILED'}"
              f"{'; ' + inclusion.summary if inclusion else ''}")
    print(f"4. the whole chain of {agent}: {'verified' if client.verify_agent(agent).ok else 'FAILED'}")


if __name__ == "__main__":
    main()
