"""Small helpers shared by the tests that watch real processes."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path


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


def git_commit(repo: Path, message: str = "x") -> None:
    """An empty commit, with an identity that needs no global git config."""
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ],
        check=True,
    )


def make_worktree(folder: Path) -> tuple[Path, Path]:
    """A repository `folder/main` with one commit and a worktree of it, `folder/tree`."""
    main = folder / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    git_commit(main)
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tree)], check=True)
    return main, tree
