"""Gathering the facts about this machine that a policy is built from (the only I/O).

Everything here reads the filesystem or the environment; `policy.build_policy` then works on
the result without touching the machine, which keeps it testable with hand-made facts.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from wiggum.agents.presets import AgentPreset
from wiggum.config.paths import resolve_user_path
from wiggum.config.schema import Config
from wiggum.sandbox.policy import (
    GIT_CODE_PATHS,
    PROJECT_CONFIG_FILES,
    SHELL_STARTUP,
    SYSTEM_DIRS_DARWIN,
    SYSTEM_DIRS_LINUX,
    HostFacts,
    PathKind,
)


def path_kind(path: Path) -> PathKind:
    try:
        if path.is_dir():
            return "dir"
        if path.is_file():
            return "file"
        return "other" if path.exists() or path.is_symlink() else "missing"
    except OSError:
        return "other"


def platform_name() -> str:
    return "darwin" if sys.platform == "darwin" else sys.platform.rstrip("0123456789")


def agent_argv(config: Config, preset: AgentPreset) -> tuple[str, ...]:
    """The agent's command before the prompt is substituted."""
    base = config.agent.command or preset.argv
    return (*base, *config.agent.args)


def find_binary(name: str, environ: Mapping[str, str]) -> Path | None:
    if not name:
        return None
    found = shutil.which(name, path=environ.get("PATH", os.defpath))
    return Path(found).absolute() if found else None


def runtime_dirs(binary: Path | None, home: Path) -> tuple[Path, ...]:
    """Folders to expose read-only so the agent's binary and its runtime can load.

    Binaries under a system folder need nothing more. One installed in the home directory
    (`~/.local/bin/claude`, `~/.nvm/.../bin/codex`, `~/.bun/bin/...`) needs the folder it is
    found in and the install root of the file it resolves to: the parent of a `bin` folder
    (a Node or Python prefix), or the folder holding the file.
    """
    if binary is None:
        return ()
    real = Path(os.path.realpath(binary))
    dirs = [binary.parent]
    dirs.append(real.parent.parent if real.parent.name == "bin" else real.parent)
    if real.suffix in ("", ".js", ".mjs", ".cjs") and _is_script(real):
        interpreter = _shebang_interpreter(real)
        if interpreter is not None and interpreter.parent.name == "bin":
            dirs.append(interpreter.parent.parent)  # e.g. the node of an nvm install
    kept = [d for d in (Path(os.path.realpath(d)) for d in dirs) if not _too_wide(d, home)]
    return tuple(dict.fromkeys(kept))


def _too_wide(folder: Path, home: Path) -> bool:
    """Whether exposing `folder` would expose much more than a runtime: the home directory or
    anything above it, or a shared prefix such as ~/.local (whose share/ holds keyrings). The
    folder the binary was found in (~/.local/bin, ~/bin) is still exposed."""
    home = Path(os.path.realpath(home))
    return folder in {home, *(home / name for name in SHARED_PREFIXES)} or (
        home.is_relative_to(folder)
    )


SHARED_PREFIXES = (".local", ".config", ".cache", ".var")


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def _shebang_interpreter(path: Path) -> Path | None:
    try:
        with path.open("rb") as handle:
            words = handle.readline(256)[2:].decode(errors="replace").split()
    except OSError:
        return None
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:
        found = shutil.which(words[-1])
        return Path(os.path.realpath(found)) if found else None
    return Path(os.path.realpath(words[0]))


def git_dirs(project: Path) -> tuple[Path, ...]:
    """For a worktree (`.git` is a file), the real git dir and the common dir it points to."""
    marker = project / ".git"
    if not marker.is_file():
        return ()
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ()
    if not text.startswith("gitdir:"):
        return ()
    gitdir = Path(os.path.realpath(project / text.removeprefix("gitdir:").strip()))
    dirs = [gitdir]
    common_file = gitdir / "commondir"
    if common_file.is_file():
        common = common_file.read_text(encoding="utf-8", errors="replace").strip()
        dirs.append(Path(os.path.realpath(gitdir / common)))
    return tuple(d for d in dict.fromkeys(dirs) if not d.is_relative_to(project))


def collect_host(
    config: Config,
    preset: AgentPreset,
    project: Path,
    environ: Mapping[str, str],
    *,
    home: Path | None = None,
    system: str | None = None,
) -> HostFacts:
    system = system or platform_name()
    _remove_stale_masks(project)
    home = Path(os.path.realpath(home or Path(environ.get("HOME") or Path.home())))
    raw = {*config.sandbox.allow_paths, *config.sandbox.read_only_paths}
    raw |= {*config.sandbox.deny_paths, *preset.auth_paths, *preset.read_only}
    raw |= set(preset.config_files)
    resolved = {p: resolve_user_path(p, project, home) for p in raw}
    binary = find_binary(
        agent_argv(config, preset)[0] if agent_argv(config, preset) else "", environ
    )
    runtime = runtime_dirs(binary, home)
    worktree = git_dirs(project)
    scratch = _scratch_dir(project, environ) if system == "darwin" else None
    system_dirs = SYSTEM_DIRS_DARWIN if system == "darwin" else SYSTEM_DIRS_LINUX
    links = {Path(d): str(Path(d).readlink()) for d in system_dirs if Path(d).is_symlink()}
    candidates: list[Path] = [project, home, *resolved.values(), *runtime, *worktree]
    candidates += [scratch] if scratch else []
    candidates += [Path(d) for d in system_dirs]
    candidates += _protected_candidates(project, [project, *worktree, *resolved.values()])
    kinds = {p: path_kind(p) for p in dict.fromkeys(candidates)}
    for path in [p for p, kind in kinds.items() if kind == "missing"]:
        for parent in path.parents:  # the policy masks the topmost missing ancestor
            if parent in kinds:
                break
            kinds[parent] = path_kind(parent)
            if kinds[parent] != "missing":
                break
    return HostFacts(
        system=system,
        home=home,
        environ=dict(environ),
        resolved=resolved,
        kinds=kinds,
        system_links=links,
        resolv_conf=_resolv_conf_target(),
        runtime_dirs=runtime,
        git_dirs=worktree,
        scratch=scratch,
    )


def _remove_stale_masks(project: Path) -> None:
    """An empty folder named like a config file is the mount point of a mask that an
    interrupted run (wiggum killed with SIGKILL) could not remove; no user makes one."""
    for name in PROJECT_CONFIG_FILES:
        folder = project / name
        if folder.is_dir() and not folder.is_symlink():
            with contextlib.suppress(OSError):
                folder.rmdir()


def _scratch_dir(project: Path, environ: Mapping[str, str]) -> Path:
    """macOS has no private /tmp per sandbox: give each project its own temporary folder
    inside the user's (already per-user) TMPDIR."""
    base = Path(os.path.realpath(environ.get("TMPDIR") or tempfile.gettempdir()))
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:12]
    folder = base / f"wiggum-{digest}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _protected_candidates(project: Path, writable: Iterable[Path]) -> list[Path]:
    out = [project / name for name in (*PROJECT_CONFIG_FILES, ".wiggum", ".git")]
    out += [project / ".git" / name for name in GIT_CODE_PATHS]
    for folder in writable:
        out += [folder / name for name in GIT_CODE_PATHS]
        out += [folder / ".git", *(folder / ".git" / name for name in GIT_CODE_PATHS)]
        out += [folder / name for name in SHELL_STARTUP]
    return out


def _resolv_conf_target() -> Path | None:
    """systemd-resolved and others make /etc/resolv.conf a link into /run, which the sandbox
    does not mount; the real file must be bound at its own path for DNS to work."""
    link = Path("/etc/resolv.conf")
    if not link.is_symlink():
        return None
    target = Path(os.path.realpath(link))
    if target.is_relative_to("/etc") or not target.is_file():
        return None
    return target
