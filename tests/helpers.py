"""Small helpers shared by the tests that watch real processes."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable


def sleeping(marker: str) -> bool:
    """Whether a `sleep MARKER` process (a test's tagged agent or child) is alive."""
    done = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, check=False)
    return done.returncode == 0


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
