"""bubblewrap (Linux): a policy rendered as a bwrap argument list.

Each piece of the sandbox is a small function returning the arguments for it; the argv is
their concatenation, in an order that matters: bwrap applies mounts in sequence, so system
folders come first, then the hidden home, then user paths from the shallowest to the deepest,
then the protected and hidden masks, which must win over everything they sit inside.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wiggum.sandbox.policy import Entry, Policy

HOSTNAME = "wiggum-sandbox"


@dataclass(frozen=True)
class BwrapInfo:
    path: Path
    version: tuple[int, ...]
    disable_userns: bool  # --disable-userns exists (bubblewrap >= 0.8)
    setuid: bool = False

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version)) or "unknown"


def detect_bwrap(environ: Mapping[str, str]) -> BwrapInfo | None:
    """Find bwrap and ask it what it supports (a few milliseconds; no sandbox is started)."""
    found = shutil.which("bwrap", path=environ.get("PATH"))
    if found is None:
        return None
    path = Path(found)
    try:
        version = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
        usage = subprocess.run(
            [found, "--help"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return BwrapInfo(path, (), disable_userns=False)
    numbers = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    parsed = tuple(int(n) for n in numbers.groups() if n is not None) if numbers else ()
    return BwrapInfo(
        path,
        parsed,
        disable_userns="--disable-userns" in usage,
        setuid=bool(path.stat().st_mode & 0o4000),
    )


def build_bwrap_argv(policy: Policy, bwrap: BwrapInfo, command: Sequence[str]) -> list[str]:
    """The complete command line that runs `command` inside `policy`."""
    return [
        str(bwrap.path),
        *_namespaces(policy, bwrap),
        *_system(policy),
        *_home(policy),
        *_user_paths(policy),
        *_pins(policy.pinned),
        *_masks(policy.protected, hide=False),
        *_masks(policy.hidden, hide=True),
        "--chdir", str(policy.cwd),
        *_environment(policy.env),
        "--",
        *command,
    ]  # fmt: skip


def _namespaces(policy: Policy, bwrap: BwrapInfo) -> list[str]:
    args = ["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts"]
    args += ["--unshare-cgroup-try"]
    if not policy.network:
        args.append("--unshare-net")
    if bwrap.disable_userns:
        args.append("--disable-userns")  # no nested user namespace: no new capabilities
    args += ["--hostname", HOSTNAME]
    # --new-session: no controlling terminal, so TIOCSTI cannot type into the user's shell.
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return args


def _system(policy: Policy) -> list[str]:
    args: list[str] = []
    for entry in policy.system:
        args += ["--ro-bind", str(entry.path), str(entry.path)]
    for link, target in policy.system_links:
        args += ["--symlink", target, str(link)]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if policy.network:
        for path in policy.extra_ro_files:
            args += ["--ro-bind", str(path), str(path)]
    return args


def _home(policy: Policy) -> list[str]:
    # An empty home: config and secrets stay out unless bound back below.
    return ["--tmpfs", str(policy.home)]


def _user_paths(policy: Policy) -> list[str]:
    mounts = [(e, "--ro-bind") for e in policy.read_only] + [(e, "--bind") for e in policy.writable]
    mounts.sort(key=lambda item: len(item[0].path.parts))  # parents before children
    args: list[str] = []
    for entry, flag in mounts:
        args += [flag, str(entry.path), str(entry.path)]
    return args


def _pins(paths: Iterable[Path]) -> list[str]:
    # A folder bound onto itself is a mount point, and a mount point cannot be renamed.
    args: list[str] = []
    for path in paths:
        args += ["--bind", str(path), str(path)]
    return args


def _masks(entries: Iterable[Entry], *, hide: bool) -> list[str]:
    args: list[str] = []
    for entry in entries:
        path = str(entry.path)
        if entry.kind == "missing" or (hide and entry.kind == "dir"):
            # An empty read-only folder: nothing to read, and nothing can be created there.
            args += ["--tmpfs", path, "--remount-ro", path]
        elif hide:
            args += ["--ro-bind", "/dev/null", path]
        else:
            args += ["--ro-bind", path, path]
    return args


def _environment(env: Iterable[tuple[str, str]]) -> list[str]:
    args = ["--clearenv"]
    for name, value in env:
        args += ["--setenv", name, value]
    return args
