"""A real ledger service for the tests: `node bin/ledger.js serve` (the compiled build) on SQLite (a
fresh file) or PostgreSQL (a fresh schema), on a free loopback port, with its demo agents."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from conftest import ROOT

LEDGER = ROOT / "bin" / "ledger.js"
NODE = shutil.which("node")
POSTGRES_URL = os.environ.get("LEDGER_TEST_POSTGRES", "postgres://root@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
        return True
    except OSError:
        return False


class Service:
    def __init__(self, store: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="pyledger-"))
        database = (f"sqlite:{self.dir / 'ledger.db'}" if store == "sqlite"
                    else f"{POSTGRES_URL}?schema=py_{uuid.uuid4().hex[:12]}")
        self.port = free_port()
        self.env = {
            "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "HOST": "127.0.0.1",
            "PORT": str(self.port), "LEDGER_DATABASE_URL": database, "LEDGER_LOG_LEVEL": "warn",
            "LEDGER_LOG_ORIGIN": "ledger.test/log", "LEDGER_OTS_CALENDARS": "http://127.0.0.1:9",
            "LEDGER_BITCOIN_HEADERS_URL": "http://127.0.0.1:9", "LEDGER_WRITE_LIMIT_PER_MIN": "1000000",
            "LEDGER_READ_LIMIT_PER_MIN": "1000000", "LEDGER_SITE_URL": f"http://127.0.0.1:{self.port}",
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.base = f"http://127.0.0.1:{self.port}/v1"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([NODE or "node", str(LEDGER), *args], env=self.env, cwd=self.dir,
                              capture_output=True, text=True, timeout=300)

    def demo(self, prefix: str) -> list[dict[str, Any]]:
        done = self.cli("demo", "--days", "30", "--prefix", prefix, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    def start(self) -> None:
        log = open(self.dir / "serve.log", "wb")
        self.process = subprocess.Popen([NODE or "node", str(LEDGER), "serve"], env=self.env, cwd=self.dir,
                                        stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.dir / "serve.log").read_text())
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the service did not answer /healthz")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def create_agent(self, handle: str) -> str:
        """A new agent; returns its API key's secret."""
        done = self.cli("agents", "create", handle, "--json")
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["api_key"]["secret"])

    def wait_integrated(self, size: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"{self.base}/transparency", timeout=5) as r:
                if (json.load(r).get("log") or {}).get("tree_size", 0) >= size:
                    return
            time.sleep(0.2)
        raise AssertionError(f"the log did not reach size {size}")
