"""`loop.commit`: a git checkpoint after each iteration, made by wiggum on the host.

Hooks never run for it (`core.hooksPath=/dev/null`, `--no-verify`): the commit is wiggum's,
and a hook is exactly what an agent would try to plant.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false"]
IDENTITY = ["-c", "user.name=wiggum", "-c", "user.email=wiggum@localhost"]


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *SAFE, *args], cwd=project, capture_output=True, text=True, timeout=60, check=False
    )


def commit_checkpoint(project: Path, message: str) -> str | None:
    """Commit everything that changed; the new commit's id, or None when nothing changed or
    the project is not a git repository."""
    if _git(project, "rev-parse", "--is-inside-work-tree").returncode != 0:
        return None
    if _git(project, "add", "-A").returncode != 0:
        return None
    if _git(project, "diff", "--cached", "--quiet").returncode == 0:
        return None
    identity = [] if _git(project, "config", "user.email").stdout.strip() else IDENTITY
    done = subprocess.run(
        ["git", *SAFE, *identity, "commit", "--no-verify", "-q", "-m", message],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        return None
    return _git(project, "rev-parse", "HEAD").stdout.strip() or None
