"""Watching the project's git repository for changes that would make git on the host run code.

The agent may write most of `.git` (objects, refs: it has to, to commit), but not hooks,
config or modules. git, however, can be pointed at another config without touching those:
a `.git/commondir` or `.git/config.worktree` file, a `.git` folder swapped for a `gitdir:`
file, a worktree's `commondir` rewritten, or a bare repository (HEAD, objects, refs, config)
planted in the project itself. Those cannot be masked (git refuses to work when they are
folders), so wiggum records the repository's shape before the first iteration, compares it
after every iteration, and stops the run, before any checkpoint, when it changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Files whose appearance redirects git to a config the sandbox does not protect.
REDIRECTS = (".git/commondir", ".git/config.worktree")
BARE_MARKERS = ("HEAD", "objects", "refs")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


@dataclass(frozen=True)
class GitState:
    marker: str  # what `.git` is: "dir", "file" or "missing"
    pointer: str | None  # a `.git` file's content ("gitdir: ...")
    redirects: frozenset[str]  # which REDIRECTS exist
    worktree_commondir: str | None  # a worktree's <gitdir>/commondir content
    bare_here: bool  # HEAD, objects and refs at the project's top: a bare repository


def snapshot(project: Path) -> GitState:
    marker_path = project / ".git"
    marker = "dir" if marker_path.is_dir() else "file" if marker_path.is_file() else "missing"
    pointer = _read(marker_path) if marker == "file" else None
    worktree_commondir = None
    if pointer and pointer.startswith("gitdir:"):
        gitdir = Path(os.path.realpath(project / pointer.removeprefix("gitdir:").strip()))
        worktree_commondir = _read(gitdir / "commondir")
    return GitState(
        marker=marker,
        pointer=pointer,
        redirects=frozenset(r for r in REDIRECTS if (project / r).exists()),
        worktree_commondir=worktree_commondir,
        bare_here=all((project / name).exists() for name in BARE_MARKERS),
    )


def tampered(before: GitState, after: GitState) -> list[str]:
    """What changed in the repository's shape, in words; [] when nothing did."""
    problems = []
    if after.marker != before.marker:
        problems.append(f".git changed from a {before.marker} to a {after.marker}")
    if after.pointer != before.pointer:
        problems.append(f"the .git file now says {after.pointer!r}")
    for name in sorted(after.redirects - before.redirects):
        problems.append(f"{name} appeared (it points git at another config)")
    if after.worktree_commondir != before.worktree_commondir:
        problems.append("the worktree's commondir now points elsewhere")
    if after.bare_here and not before.bare_here:
        problems.append(
            "HEAD, objects/ and refs/ appeared at the top of the project (a bare "
            "repository git would use)"
        )
    return problems
