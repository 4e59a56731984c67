"""One run per project at a time: an advisory lock on `.wiggum/run.lock`.

The kernel drops the lock when the process dies, however it dies, so a crashed run never
leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from wiggum.errors import WiggumError


class RunLocked(WiggumError):
    pass


@contextlib.contextmanager
def run_lock(state_dir: Path) -> Iterator[None]:
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise RunLocked(
                f"another wiggum run (pid {holder}) is running in this project; wait for it "
                f"or stop it (the lock is {path})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
