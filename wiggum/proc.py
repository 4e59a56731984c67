"""Starting and stopping agent processes: the one place wiggum spawns anything long-lived.

Each launch gets its own process group (and session), so stopping it reaches every process
it started, not just the first; resource limits are set in the child before it execs, so
the sandbox and everything in it inherit them.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from wiggum.sandbox.policy import Limits

GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one agent process, as decided by a sandbox backend."""

    argv: tuple[str, ...]
    cwd: Path
    limits: Limits = field(default_factory=Limits)
    env: Mapping[str, str] | None = None  # None: inherit (bwrap clears it for the agent)
    mount_points: tuple[Path, ...] = ()  # empty masks bwrap may leave; removed afterwards
    backend: str = "none"
    after: tuple[str, ...] = ()  # a command that cleans up after the launch (a container)


def rlimits(limits: Limits) -> list[tuple[int, int]]:
    """(resource, value) pairs for the limits that are set, on this platform."""
    pairs = []
    if limits.memory:
        # RLIMIT_DATA (Linux >= 4.7) counts private writable memory, so it limits what a
        # process really allocates. RLIMIT_AS would also count the large PROT_NONE
        # reservations of V8 and Bun and break Node-based agents for no safety gain.
        pairs.append((resource.RLIMIT_DATA, limits.memory))
    if limits.processes:
        pairs.append((resource.RLIMIT_NPROC, limits.processes))
    if limits.cpu_seconds:
        pairs.append((resource.RLIMIT_CPU, limits.cpu_seconds))
    if limits.file_size:
        pairs.append((resource.RLIMIT_FSIZE, limits.file_size))
    return pairs


_PRLIMIT_FLAGS = (
    ("data", "memory"),
    ("nproc", "processes"),
    ("cpu", "cpu_seconds"),
    ("fsize", "file_size"),
)


def capped(limits: Limits) -> Limits:
    """The limits lowered to this process's hard limits (a hard limit cannot be raised)."""
    values = dict(
        zip(
            ("memory", "processes", "cpu_seconds", "file_size"),
            (limits.memory, limits.processes, limits.cpu_seconds, limits.file_size),
            strict=True,
        )
    )
    for which, value in rlimits(limits):
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY and value > hard:
            name = {
                resource.RLIMIT_DATA: "memory",
                resource.RLIMIT_NPROC: "processes",
                resource.RLIMIT_CPU: "cpu_seconds",
                resource.RLIMIT_FSIZE: "file_size",
            }[which]
            values[name] = hard
    return Limits(**values)


def prlimit_argv(limits: Limits, prlimit: str) -> list[str]:
    """`prlimit --data=N:N ... --`: the limits on the command line, where `explain` shows
    them, and cheaper than a preexec_fn (which makes Python fork instead of vfork)."""
    args = [
        f"--{flag}={value}:{value}"
        for flag, attr in _PRLIMIT_FLAGS
        if (value := getattr(limits, attr))
    ]
    return [prlimit, *args, "--"] if args else []


def _limiter(pairs: Sequence[tuple[int, int]]) -> Callable[[], None] | None:
    if not pairs:
        return None

    def apply() -> None:  # runs in the child between fork and exec
        for which, value in pairs:
            _soft, hard = resource.getrlimit(which)
            lowered = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (lowered, lowered))

    return apply


def start(
    launch: Launch,
    *,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
) -> subprocess.Popen[bytes]:
    """Start the launch in a new session and process group."""
    return subprocess.Popen(
        launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        # preexec_fn is unsafe only with threads that hold locks; none run during a spawn.
        preexec_fn=_limiter(rlimits(launch.limits)),
    )


def stop(process: subprocess.Popen[bytes], grace: float = GRACE_SECONDS) -> int:
    """Stop the process's whole group: TERM, then KILL after `grace` seconds. Returns the
    exit status. Safe to call on a process that has already exited."""
    _signal_group(process.pid, signal.SIGTERM)
    try:
        return process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    finally:
        # Children that ignore TERM or outlived their parent still belong to the group.
        _signal_group(process.pid, signal.SIGKILL)
    return process.wait()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def remove_mount_points(paths: Iterable[Path]) -> None:
    """Remove the empty files and folders bwrap created to mount masks on, deepest first.

    Only paths the policy recorded as missing before the launch are passed here, and only
    empty ones are removed, so nothing the user made can be deleted.
    """
    for path in sorted(paths, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # fails (and is skipped) unless empty
            elif path.is_file() and path.stat().st_size == 0:
                path.unlink()


def become_subreaper() -> bool:
    """Linux: have orphaned descendants re-parented to this process instead of init.

    An agent can start a child in a new session (`setsid`), which leaves its process group.
    As a subreaper, wiggum still finds such children (they become its own) and stops them.
    Inside bwrap this is not needed: the sandbox's PID namespace dies as a whole.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    pr_set_child_subreaper = 36
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0)


def descendants(root: int) -> list[int]:
    """Every live process below `root`, read from /proc (Linux); [] elsewhere."""
    children: dict[int, list[int]] = {}
    try:
        entries = [name for name in os.listdir("/proc") if name.isdigit()]  # noqa: PTH208
    except OSError:
        return []
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:  # noqa: PTH123 - hot path
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    queue = list(children.get(root, []))
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue += children.get(pid, [])
    return found


def kill_processes(pids: Sequence[int]) -> None:
    """SIGKILL the given processes, then reap those that are (or became) our children."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


def finish(launch: Launch) -> None:
    """Clean up what a finished launch may leave: mount points, a container."""
    remove_mount_points(launch.mount_points)
    if launch.after:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                launch.after,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
                check=False,
            )


def run_foreground(launch: Launch) -> int:
    """Run a launch attached to this terminal's streams; used by `wiggum sandbox exec`.

    Ctrl-C or SIGTERM to wiggum stops the launch's whole group before wiggum exits.
    """
    process = start(launch)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        code = process.wait()
    except KeyboardInterrupt:
        stop(process)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        _signal_group(process.pid, signal.SIGKILL)  # nothing of the launch outlives it
        finish(launch)
    return code if code >= 0 else 128 - code


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if sys.platform == "win32":  # pragma: no cover - wiggum does not run natively on Windows
    raise ImportError("wiggum needs Linux or macOS (on Windows, use WSL2)")
