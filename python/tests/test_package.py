"""The package itself: version follows package.json, the wheel builds offline, stdlib-only canon."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, skip_or_fail

import decision_ledger

PYTHON_DIR = ROOT / "python"


def test_version_follows_package_json() -> None:
    service_version = json.loads((ROOT / "package.json").read_text())["version"]
    pyproject = (PYTHON_DIR / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == service_version  # type: ignore[union-attr]
    assert decision_ledger.__version__ == service_version


def test_wheel_builds_offline(tmp_path: Path) -> None:
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError:
        skip_or_fail("the offline wheel build needs python3-setuptools and python3-wheel")
    source = tmp_path / "src"
    shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps",
                           "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = next((tmp_path / "dist").glob("decision_ledger-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "decision_ledger/py.typed" in names and "decision_ledger/canon.py" in names


def test_canon_and_verify_need_only_the_standard_library() -> None:
    code = ("import sys; sys.modules['cryptography'] = None; "
            "import decision_ledger, decision_ledger.verify, decision_ledger.merkle, decision_ledger.note; "
            "from decision_ledger.signing import verify_ed25519\n"
            "try:\n    verify_ed25519(b'', b'', b'')\nexcept decision_ledger.MissingCryptography as e:\n    print(e)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PYTHON_DIR, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "python3-cryptography" in done.stdout and "decision-ledger[signing]" in done.stdout
