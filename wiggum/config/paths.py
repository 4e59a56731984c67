"""Turning the paths users write into the absolute, symlink-free paths a policy is made of.

Pure functions of their arguments (the home directory is passed in), so they can be tested
with generated paths. The filesystem is consulted only by `os.path.realpath`, which must see
the real symlinks: resolving them before validation is the point.
"""

from __future__ import annotations

import os
from pathlib import Path


def resolve_user_path(raw: str, project_root: Path, home: Path) -> Path:
    """Resolve `raw` as written in a config: `~` is `home`, relative means project-relative.

    `..` and symlinks are resolved (in the order the kernel would follow them), so the result
    is where an access would really land.
    """
    if raw == "~" or raw.startswith("~/"):
        path = home / raw[2:]
    elif raw.startswith("~"):
        path = Path(raw).expanduser()  # ~otheruser/...
    else:
        path = Path(raw)
    if not path.is_absolute():
        path = project_root / path
    return Path(os.path.realpath(path))


def writable_path_danger(path: Path, project_root: Path, home: Path) -> str | None:
    """Why making `path` writable would leave nothing confined, or None if it is acceptable.

    All three arguments must already be resolved. Refused: `/`, the home directory or any
    folder that contains it, and any folder above the project's parent (that would expose
    every sibling project and more). The project's parent itself is allowed: it is the
    monorepo case (a project in a sub-folder of the repository it belongs to).
    """
    root = Path(path.anchor)
    if path == root:
        return "it is the root of the filesystem"
    if path == home:
        return "it is your whole home directory"
    if home.is_relative_to(path):
        return f"it contains your home directory ({home})"
    if project_root.parent != path and project_root.parent.is_relative_to(path):
        return "it is a folder above the project's parent, which exposes every sibling project"
    return None


def readable_path_danger(path: Path, home: Path) -> str | None:
    """Why making `path` readable would undo the sandbox, or None if it is acceptable: `/`
    would show the host's /proc, /tmp and every other folder over the sandbox's own; the home
    directory (or a folder above it) would show every secret in it."""
    if path == Path(path.anchor):
        return "it is the root of the filesystem (the host's /proc and /tmp would show through)"
    if home.is_relative_to(path):
        return "it is (or contains) your home directory"
    for special in (Path("/proc"), Path("/dev")):
        if path.is_relative_to(special):
            return f"the sandbox has its own {special}"
    return None
