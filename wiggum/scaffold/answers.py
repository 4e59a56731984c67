"""The answers `wiggum init` needs, their defaults, and how they are written into files.

Defaults come, lowest first, from the built-in ones, what the machine offers (the agents on
PATH, the sandbox that works here), the user config file, and the answers recorded by a
previous `wiggum init` in this project.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from wiggum.agents.presets import PRESETS
from wiggum.config.schema import DEFAULT_DENY_PATHS

ANSWERS_FILE = ".ralph/.copier-answers.yml"
CLOUD_AGENTS = ("claude", "codex", "opencode", "gemini")


@dataclass(frozen=True)
class Answers:
    format: str = "toml"
    agent: str = "demo"
    command: tuple[str, ...] = ()
    sandbox: bool = True
    mode: str = "auto"
    network: bool = False
    allow_paths: tuple[str, ...] = ()
    read_only_paths: tuple[str, ...] = ()
    deny_paths: tuple[str, ...] = DEFAULT_DENY_PATHS
    max_iterations: int = 10
    iteration_timeout: int = 1800

    def as_data(self) -> dict[str, Any]:
        """The answers as copier data, plus the literals the templates paste in."""
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        data["lit"] = {k: _toml(v) for k, v in data.items()}
        data["js"] = {k: _js(v) for k, v in data.items() if k != "lit"}
        preset = PRESETS[self.agent]
        data["agent_note"] = f"{preset.name}: {preset.summary}"
        data["mode_note"] = "bubblewrap on Linux, sandbox-exec on macOS"
        data["network_note"] = (
            "the agent needs it for its API" if self.network else "off: nothing leaves the sandbox"
        )
        return data


def _toml(value: Any) -> str:
    """A TOML literal: JSON's strings, numbers, booleans and arrays are TOML's too, as long as
    no character needs an escape TOML lacks (json.dumps only emits \\uXXXX and the common
    ones, all valid TOML)."""
    return json.dumps(value, ensure_ascii=False)


def _js(value: Any) -> str:
    if isinstance(value, str):
        return "'" + json.dumps(value, ensure_ascii=False)[1:-1].replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return json.dumps(value)


def machine_defaults(environ: Mapping[str, str]) -> Answers:
    """What this machine suggests: the first cloud agent found on PATH (else the demo
    agent, which needs nothing), and network on exactly when that agent needs it."""
    path = environ.get("PATH")
    agent = next((a for a in CLOUD_AGENTS if shutil.which(PRESETS[a].binary, path=path)), "demo")
    return Answers(agent=agent, network=PRESETS[agent].requires_network)


def user_defaults(base: Answers, user_config: Path | None) -> Answers:
    """Pre-fill from the user config file (`~/.config/wiggum/config.toml`)."""
    if user_config is None or not user_config.is_file():
        return base
    import tomllib

    try:
        data = tomllib.loads(user_config.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return base
    agent, loop, sandbox = (data.get(k, {}) for k in ("agent", "loop", "sandbox"))
    picks: dict[str, Any] = {
        "agent": agent.get("preset"),
        "command": agent.get("command"),
        "max_iterations": loop.get("maxIterations"),
        "iteration_timeout": loop.get("iterationTimeout"),
        "sandbox": sandbox.get("enabled"),
        "mode": sandbox.get("mode"),
        "network": sandbox.get("network", sandbox.get("allowNetwork")),
        "allow_paths": sandbox.get("allowPaths"),
        "read_only_paths": sandbox.get("readOnlyPaths"),
        "deny_paths": sandbox.get("denyPaths"),
    }
    return merge(base, {k: v for k, v in picks.items() if v is not None})


def recorded(project: Path) -> dict[str, Any]:
    """The answers a previous `wiggum init` recorded here ({} when none or unreadable)."""
    path = project / ANSWERS_FILE
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return {}
    return {k: v for k, v in (data or {}).items() if not str(k).startswith("_")}


def merge(base: Answers, values: Mapping[str, Any]) -> Answers:
    """`base` with the known, well-typed keys of `values` applied (others are ignored)."""
    known = {f.name: f for f in fields(Answers)}
    updates: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            continue
        default = getattr(base, key)
        if isinstance(default, tuple) and isinstance(value, list | tuple):
            updates[key] = tuple(str(v) for v in value)
        elif (
            (isinstance(default, bool) and isinstance(value, bool))
            or (
                isinstance(default, int)
                and not isinstance(default, bool)
                and (isinstance(value, int) and not isinstance(value, bool))
            )
            or (isinstance(default, str) and isinstance(value, str))
        ):
            updates[key] = value
    return replace(base, **updates)
