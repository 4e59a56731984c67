"""The sandbox policy: what the agent may read, write and reach, as resolved absolute paths.

`build_policy` is a pure function of the configuration, the agent preset and `HostFacts`
(everything it needs to know about the machine, gathered beforehand by `host.collect_host`).
Every backend renders the same `Policy`, so bwrap, Seatbelt and containers cannot drift apart
on what they allow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wiggum.agents.presets import AgentPreset
from wiggum.config.schema import Config
from wiggum.errors import ConfigError, Problem

PathKind = Literal["dir", "file", "missing", "other"]

# Folders of the operating system that every program needs to read.
SYSTEM_DIRS_LINUX = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SYSTEM_DIRS_DARWIN = (
    "/usr", "/bin", "/sbin", "/System", "/Library", "/Applications", "/opt", "/private/etc",
    "/private/var/db",
)  # fmt: skip
# Files a shell runs at start-up: an agent that could write one would run code outside the
# sandbox the next time the user opens a terminal. Existing ones in writable folders are kept
# read-only. Missing ones are not masked: shells read them only from the home directory, which
# can never be writable (validation refuses it), and masking nine names in every writable
# folder would litter it with mount points for the length of every run.
SHELL_STARTUP = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin",
)  # fmt: skip
PROJECT_CONFIG_FILES = ("ralph.toml", "ralph.config.cjs")
# What in a git folder makes git on the host run code: hooks, the config (fsmonitor, filters,
# aliases...) and modules/, where submodules keep their own hooks and config.
GIT_CODE_PATHS = ("hooks", "config", "modules")
# Variables that programs need to behave normally; nothing secret.
BASE_ENV = (
    "PATH", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE", "LC_ALL",
    "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "TZ", "NO_COLOR",
    "FORCE_COLOR",
)  # fmt: skip


@dataclass(frozen=True)
class Entry:
    """One path of the policy and what it is on the host (missing paths are masked)."""

    path: Path
    kind: PathKind


@dataclass(frozen=True)
class Limits:
    memory: int = 0  # bytes, 0 = none
    processes: int = 0
    cpu_seconds: int = 0
    file_size: int = 0


@dataclass(frozen=True)
class HostFacts:
    """What the policy needs to know about this machine, gathered before it is built."""

    system: str  # "linux", "darwin", ...
    home: Path
    environ: Mapping[str, str]
    resolved: Mapping[str, Path]  # each path string of config and preset -> real path
    kinds: Mapping[Path, PathKind]  # the kind of every path the policy may name
    system_links: Mapping[Path, str] = field(default_factory=dict)  # /bin -> "usr/bin"
    resolv_conf: Path | None = None  # real file behind /etc/resolv.conf when it is a link
    runtime_dirs: tuple[Path, ...] = ()  # where the agent's binary and runtime live
    git_dirs: tuple[Path, ...] = ()  # a worktree's real git dir and common dir
    scratch: Path | None = None  # per-project temporary folder (macOS: /tmp is shared)

    def kind(self, path: Path) -> PathKind:
        return self.kinds.get(path, "missing")


@dataclass(frozen=True)
class Policy:
    project: Path
    home: Path
    cwd: Path
    network: bool
    system: tuple[Entry, ...]  # read-only system folders that exist
    system_links: tuple[tuple[Path, str], ...]
    read_only: tuple[Entry, ...]  # readOnlyPaths and the agent's runtime
    writable: tuple[Entry, ...]  # the project first
    protected: tuple[Entry, ...]  # read-only although inside a writable path
    hidden: tuple[Entry, ...]  # not readable at all
    env: tuple[tuple[str, str], ...]
    limits: Limits
    extra_ro_files: tuple[Path, ...] = ()  # e.g. the resolv.conf target under /run
    # Folders between a writable root and a protected path (`.git` for `.git/hooks`): they
    # must not be renamed, else the agent could move the protected path aside and create a
    # fresh one in its place.
    pinned: tuple[Path, ...] = ()
    skipped: tuple[Path, ...] = ()  # allowPaths / readOnlyPaths that do not exist

    def masked_missing(self) -> tuple[Path, ...]:
        """Paths masked although missing: bwrap leaves empty mount points for them."""
        return tuple(e.path for e in (*self.protected, *self.hidden) if e.kind == "missing")


def build_policy(
    config: Config,
    preset: AgentPreset,
    host: HostFacts,
    project: Path,
) -> Policy:
    """The policy for running `preset` in `project` with `config` on `host`."""
    sandbox = config.sandbox
    system_dirs = SYSTEM_DIRS_DARWIN if host.system == "darwin" else SYSTEM_DIRS_LINUX
    links = {p: t for p, t in host.system_links.items() if str(p) in system_dirs}
    system = tuple(
        Entry(Path(d), "dir")
        for d in system_dirs
        if host.kind(Path(d)) == "dir" and Path(d) not in links
    )
    writable_paths = [project, *host.git_dirs]
    if host.scratch is not None:
        writable_paths.append(host.scratch)
    writable_paths += [host.resolved[p] for p in (*sandbox.allow_paths, *preset.auth_paths)]
    writable = _entries(writable_paths, host)
    read_paths = [host.resolved[p] for p in (*sandbox.read_only_paths, *preset.read_only)]
    # Where the agent's binary lives, unless a system folder already shows it.
    read_paths += [
        d for d in host.runtime_dirs if not any(d.is_relative_to(s.path) for s in system)
    ]
    read_only = _entries(read_paths, host, exclude=[e.path for e in writable])
    # A path that does not exist cannot be mounted; the user hears of it (explain, doctor).
    wanted = {host.resolved[p] for p in (*sandbox.allow_paths, *sandbox.read_only_paths)}
    skipped = tuple(
        e.path for e in (*writable, *read_only) if e.kind == "missing" and e.path in wanted
    )
    writable = tuple(e for e in writable if e.kind != "missing" or e.path == project)
    read_only = tuple(e for e in read_only if e.kind != "missing")
    _check_deny_paths(sandbox.deny_paths, host, project)
    roots = [e.path for e in writable]
    agent_config = [host.resolved[p] for p in preset.config_files]
    agent_config = [p for p in agent_config if host.kind(p) != "missing"]  # see config_files
    protected = _mask_targets(
        [*_protected_paths(project, writable, host), *agent_config], roots, host
    )
    exposed = _exposed(sandbox.deny_paths, host, visible=[*system, *read_only, *writable])
    hidden = _mask_targets(exposed, roots, host)
    return Policy(
        project=project,
        home=host.home,
        cwd=project,
        network=sandbox.network,
        system=system,
        system_links=tuple(sorted(links.items())),
        read_only=read_only,
        writable=writable,
        protected=protected,
        hidden=hidden,
        env=_environment(config, preset, host),
        pinned=_pinned([e.path for e in protected], roots),
        skipped=skipped,
        limits=Limits(
            sandbox.limits.memory,
            sandbox.limits.processes,
            sandbox.limits.cpu_seconds,
            sandbox.limits.file_size,
        ),
        extra_ro_files=(host.resolv_conf,) if host.resolv_conf else (),
    )


def _entries(
    paths: Iterable[Path], host: HostFacts, exclude: Iterable[Path] = ()
) -> tuple[Entry, ...]:
    seen = set(exclude)
    out = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            out.append(Entry(path, host.kind(path)))
    return tuple(out)


def _protected_paths(project: Path, writable: Iterable[Entry], host: HostFacts) -> list[Path]:
    """Paths that must stay read-only so the agent cannot loosen its own cage."""
    paths = [project / name for name in PROJECT_CONFIG_FILES]
    paths.append(project / ".wiggum")
    git = project / ".git"
    if host.kind(git) == "dir":
        paths += [git / name for name in GIT_CODE_PATHS]
    elif host.kind(git) == "missing":
        paths.append(git)  # else the agent could create a repository with its own hooks
    elif host.kind(git) == "file":
        paths.append(git)  # a worktree's pointer: rewritten, it would lead git elsewhere
    for git_dir in host.git_dirs:  # a worktree: the real repository lives elsewhere
        paths += [git_dir / name for name in GIT_CODE_PATHS]
    for entry in writable:
        if entry.kind != "dir":
            continue
        # A writable folder that holds a repository (a monorepo root in allowPaths): its
        # hooks and config run on the host as much as the project's own.
        if entry.path != project and host.kind(entry.path / ".git") == "dir":
            paths += [entry.path / ".git" / name for name in GIT_CODE_PATHS]
        # Existing start-up files only: see SHELL_STARTUP.
        paths += [p for name in SHELL_STARTUP if host.kind(p := entry.path / name) != "missing"]
    return paths


def _exposed(deny: Iterable[str], host: HostFacts, visible: Iterable[Entry]) -> list[Path]:
    """Deny paths that something else would expose; the rest are invisible already."""
    roots = [e.path for e in visible]
    paths = (host.resolved[raw] for raw in deny)
    return [p for p in paths if any(p.is_relative_to(r) or r.is_relative_to(p) for r in roots)]


def _mask_targets(
    paths: Iterable[Path], writable: Sequence[Path], host: HostFacts
) -> tuple[Entry, ...]:
    """What to mask for each path. A missing path matters only where it could be created,
    inside a writable path; there its topmost missing ancestor is masked, so that neither
    it nor anything leading to it can be created."""
    out: dict[Path, Entry] = {}
    for path in paths:
        kind = host.kind(path)
        if kind != "missing":
            out.setdefault(path, Entry(path, kind))
            continue
        root = next((r for r in writable if path != r and path.is_relative_to(r)), None)
        if root is None:
            continue
        top = path
        while top.parent != root and host.kind(top.parent) == "missing":
            top = top.parent
        out.setdefault(top, Entry(top, "missing"))
    return tuple(out.values())


def _pinned(protected: Iterable[Path], writable: Sequence[Path]) -> tuple[Path, ...]:
    out: dict[Path, None] = {}
    for path in protected:
        root = next((r for r in writable if path != r and path.is_relative_to(r)), None)
        if root is None:
            continue
        out.update(
            (parent, None)
            for parent in path.parents
            if parent != root and parent.is_relative_to(root)
        )
    return tuple(sorted(out, key=lambda p: (len(p.parts), p)))


def _check_deny_paths(deny: Sequence[str], host: HostFacts, project: Path) -> None:
    for index, raw in enumerate(deny):
        path = host.resolved[raw]
        if project.is_relative_to(path):
            raise ConfigError(
                [Problem(f"sandbox.denyPaths[{index}]", f"{raw} hides the project itself")],
                "Remove it from sandbox.denyPaths, or move the project out of it.",
            )


def _environment(
    config: Config, preset: AgentPreset, host: HostFacts
) -> tuple[tuple[str, str], ...]:
    names = dict.fromkeys((*BASE_ENV, *preset.env, *config.agent.env))
    env = {name: host.environ[name] for name in names if name in host.environ}
    env["HOME"] = str(host.home)
    env["TMPDIR"] = str(host.scratch) if host.scratch else "/tmp"
    return tuple(sorted(env.items()))
