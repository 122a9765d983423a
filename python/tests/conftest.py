"""Shared test helpers: where the repository's vectors are."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "test" / "vectors"
sys.path.insert(0, str(ROOT / "python"))


def load_vectors(relative: str) -> Any:
    return json.loads((VECTORS / relative).read_text(encoding="utf-8"))


CI = os.environ.get("CI") == "true"


def skip_or_fail(reason: str) -> None:
    """A missing service or tool skips the test with its reason, except under CI=true: it fails."""
    import pytest

    if CI:
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)
