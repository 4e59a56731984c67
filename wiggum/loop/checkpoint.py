"""`loop.commit`: a git checkpoint after each iteration, made by wiggum on the host.

Nothing the agent could have planted runs for it: hooks are off (`core.hooksPath=/dev/null`,
`--no-verify`), so is the fsmonitor, git is told exactly which repository to use (GIT_DIR,
GIT_WORK_TREE: no discovery, no bare repository in the project), and the run stops before a
checkpoint if the repository's shape changed (see gitguard). Hidden paths are never added.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

SAFE = [
    "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
    "-c", "safe.bareRepository=explicit", "-c", "commit.gpgSign=false",
]  # fmt: skip
IDENTITY = ["-c", "user.name=wiggum", "-c", "user.email=wiggum@localhost"]


def _env(project: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_DIR": str(project / ".git"), "GIT_WORK_TREE": str(project)}


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *SAFE, *args],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def commit_checkpoint(project: Path, message: str, hidden: Sequence[Path] = ()) -> str | None:
    """Commit everything that changed except `hidden` paths; the new commit's id, or None
    when nothing changed or the project has no `.git` folder of its own."""
    if not (project / ".git").is_dir():
        return None
    excluded = [
        f":(exclude,top){p.relative_to(project)}" for p in hidden if p.is_relative_to(project)
    ]
    if _git(project, "add", "-A", "--", ".", *excluded).returncode != 0:
        return None
    if _git(project, "diff", "--cached", "--quiet").returncode == 0:
        return None
    identity = [] if _git(project, "config", "user.email").stdout.strip() else IDENTITY
    if _git(project, *identity, "commit", "--no-verify", "-q", "-m", message).returncode != 0:
        return None
    return _git(project, "rev-parse", "HEAD").stdout.strip() or None
