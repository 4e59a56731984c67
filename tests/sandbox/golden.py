"""Golden files: the expected output lives in tests/sandbox/golden/; UPDATE_GOLDEN=1 rewrites."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} changed; review the diff, then UPDATE_GOLDEN=1"
