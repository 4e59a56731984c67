"""Hand-made host facts, so policies and argv can be tested without touching the machine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from wiggum.agents.presets import PRESETS
from wiggum.config.schema import SETTINGS, Config, build_config
from wiggum.sandbox.bwrap import BwrapInfo
from wiggum.sandbox.policy import HostFacts, PathKind, Policy, build_policy

HOME = Path("/home/ada")
PROJECT = HOME / "code/app"
BWRAP = BwrapInfo(Path("/usr/bin/bwrap"), (0, 8, 0), disable_userns=True)
LINUX_DIRS: dict[Path, PathKind] = {Path(d): "dir" for d in ("/usr", "/etc", "/opt")}
LINUX_LINKS = {
    Path("/bin"): "usr/bin",
    Path("/lib"): "usr/lib",
    Path("/lib64"): "usr/lib64",
    Path("/sbin"): "usr/sbin",
}


def config(**values: object) -> Config:
    """A Config with some keys set, e.g. config(**{"sandbox.network": False})."""
    converted = {}
    for key, value in values.items():
        spec = SETTINGS[key]
        converted[key] = spec.kind.convert(list(value) if isinstance(value, tuple) else value)
    return build_config(converted)


def host(
    cfg: Config,
    preset: str = "claude",
    *,
    kinds: Mapping[Path, PathKind] | None = None,
    system: str = "linux",
    home: Path = HOME,
    project: Path = PROJECT,
    **extra: object,
) -> HostFacts:
    agent = PRESETS[preset]
    raw = {
        *cfg.sandbox.allow_paths,
        *cfg.sandbox.read_only_paths,
        *cfg.sandbox.deny_paths,
        *agent.auth_paths,
        *agent.read_only,
        *agent.config_files,
    }
    resolved = {p: _resolve(p, project, home) for p in raw}
    known: dict[Path, PathKind] = {
        project: "dir",
        project / ".git": "dir",
        project / ".git/hooks": "dir",
        project / ".git/config": "file",
        project / "ralph.toml": "file",
        project / ".wiggum": "dir",
        home: "dir",
    }
    if system == "linux":
        known |= LINUX_DIRS
    known |= dict(kinds or {})
    facts = HostFacts(
        system=system,
        home=home,
        environ={
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "ANTHROPIC_API_KEY": "sk-secret",
            "AWS_SECRET_ACCESS_KEY": "nope",
        },
        resolved=resolved,
        kinds=known,
        system_links=LINUX_LINKS if system == "linux" else {},
    )
    return replace(facts, **extra)  # type: ignore[arg-type]


def _resolve(raw: str, project: Path, home: Path) -> Path:
    # resolve_user_path without the filesystem: these paths do not exist here.
    if raw == "~" or raw.startswith("~/"):
        return home / raw[2:]
    path = Path(raw)
    return Path(os.path.normpath(path if path.is_absolute() else project / path))


def policy(
    cfg: Config | None = None, preset: str = "claude", project: Path = PROJECT, **host_args: object
) -> Policy:
    cfg = cfg or Config()
    facts = host(cfg, preset, project=project, **host_args)  # type: ignore[arg-type]
    return build_policy(cfg, PRESETS[preset], facts, project)
