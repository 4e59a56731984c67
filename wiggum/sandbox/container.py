"""Containers (podman or docker, optionally with gVisor): a policy rendered as `ENGINE run`.

The strongest of wiggum's backends: a fresh container per iteration (`--rm`), every
capability dropped, no new privileges, no network unless the policy allows it, and only the
policy's paths mounted (the project read-write at its own path, so logs and errors show the
same paths as on the host). With `runtime = "runsc"`, the container runs on gVisor's own
kernel, a VM-like boundary.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wiggum.config.schema import ContainerConfig
from wiggum.sandbox.policy import Entry, Policy


@dataclass(frozen=True)
class Engine:
    name: str  # "podman" | "docker"
    path: Path
    rootless: bool  # podman run by an ordinary user


def detect_engine(choice: str, environ: Mapping[str, str]) -> Engine | None:
    """The engine to use: `podman` or `docker` as asked, or for `auto` podman then docker."""
    names = ("podman", "docker") if choice == "auto" else (choice,)
    for name in names:
        found = shutil.which(name, path=environ.get("PATH"))
        if found:
            return Engine(name, Path(found), rootless=name == "podman" and os.geteuid() != 0)
    return None


def build_container_argv(
    policy: Policy,
    engine: Engine,
    settings: ContainerConfig,
    command: Sequence[str],
    *,
    name: str,
) -> list[str]:
    """`ENGINE run ...` for `command` under `policy`, in a container called `name`."""
    return [
        str(engine.path), "run", "--rm", "--init", "--name", name,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        *(["--network", "none"] if not policy.network else []),
        *_identity(engine),
        *_limits(policy),
        *_runtime(settings),
        *_filesystem(policy, settings),
        "--workdir", str(policy.cwd),
        *_environment(policy.env),
        *settings.extra_flags,
        *(["--rootfs", settings.rootfs] if settings.rootfs else [settings.image]),
        *command,
    ]  # fmt: skip


def cleanup_argv(engine: Engine, name: str) -> list[str]:
    """Removes the container if it outlived its `run` (the client was killed)."""
    return (
        [str(engine.path), "rm", "--force", "--ignore", name]
        if engine.name == "podman"
        else [str(engine.path), "rm", "--force", name]
    )


def _identity(engine: Engine) -> list[str]:
    # Files the agent writes in the project must belong to the user, not to a container uid.
    if engine.rootless:
        return ["--userns", "keep-id"]
    return ["--user", f"{os.getuid()}:{os.getgid()}"]


def _limits(policy: Policy) -> list[str]:
    limits = policy.limits
    args: list[str] = []
    if limits.memory:
        args += ["--memory", str(limits.memory)]
    if limits.processes:
        args += ["--pids-limit", str(limits.processes)]
        args += ["--ulimit", f"nproc={limits.processes}:{limits.processes}"]
    if limits.cpu_seconds:
        args += ["--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds}"]
    if limits.file_size:
        args += ["--ulimit", f"fsize={limits.file_size}:{limits.file_size}"]
    return args


def _runtime(settings: ContainerConfig) -> list[str]:
    return ["--runtime", settings.runtime] if settings.runtime else []


def _filesystem(policy: Policy, settings: ContainerConfig) -> list[str]:
    args = ["--read-only", "--tmpfs", "/tmp"]
    if settings.rootfs:
        # The host's own folders make up the root: hide the home directory as bwrap does.
        args += ["--tmpfs", f"{policy.home}:ro"]
    for entry in policy.read_only:
        args += ["--volume", f"{entry.path}:{entry.path}:ro"]
    for entry in policy.writable:
        args += ["--volume", f"{entry.path}:{entry.path}:rw"]
    for path in policy.pinned:  # a mount point cannot be renamed (see policy.pinned)
        args += ["--volume", f"{path}:{path}:rw"]
    args += _masks(policy.protected, hide=False)
    args += _masks(policy.hidden, hide=True)
    return args


def _masks(entries: Sequence[Entry], *, hide: bool) -> list[str]:
    # The engine orders mounts by destination, so these land on top of the binds above.
    args: list[str] = []
    for entry in entries:
        if entry.kind == "missing" or (hide and entry.kind == "dir"):
            args += ["--tmpfs", f"{entry.path}:ro"]
        elif hide:
            args += ["--volume", f"/dev/null:{entry.path}:ro"]
        else:
            args += ["--volume", f"{entry.path}:{entry.path}:ro"]
    return args


def _environment(env: Sequence[tuple[str, str]]) -> list[str]:
    args: list[str] = []
    for key, value in env:
        if key != "PATH":  # the image (or rootfs) knows its own PATH
            args += ["--env", f"{key}={value}"]
    return args
