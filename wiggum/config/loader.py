"""Finding, reading and merging configuration into one effective `Config`.

Precedence, lowest first: built-in defaults, the user config file, the project file,
`WIGGUM_*` environment variables, command-line flags. A key set in a higher layer replaces the
lower value whole (lists are not concatenated), so what `config show` prints is what runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from wiggum.config.cjs import parse_cjs
from wiggum.config.document import Document
from wiggum.config.layers import (
    Layer,
    Override,
    Source,
    Sourced,
    document_layer,
    env_layer,
    flag_layer,
)
from wiggum.config.paths import readable_path_danger, resolve_user_path, writable_path_danger
from wiggum.config.schema import SETTINGS, Config, build_config
from wiggum.config.toml_source import parse_toml
from wiggum.errors import ConfigError, Problem

PROJECT_FILES = ("ralph.toml", "ralph.config.cjs")
MAX_CONFIG_BYTES = 1024 * 1024
INIT_HINT = "Run `wiggum init` to create one, or pass -C to point at the project folder."


@dataclass(frozen=True)
class LoadedConfig:
    config: Config
    sources: Mapping[str, Source]
    project_root: Path  # the folder holding the project file (the cwd when there is none)
    project_file: Path | None
    user_file: Path | None


def find_project_file(start: Path) -> Path | None:
    """The nearest ralph.toml or ralph.config.cjs from `start` upward."""
    for folder in (start, *start.parents):
        found = [folder / name for name in PROJECT_FILES if (folder / name).is_file()]
        if len(found) > 1:
            raise ConfigError(
                [Problem("", "both ralph.toml and ralph.config.cjs are here", folder)],
                "Keep one of them (ralph.toml is the default format) and delete the other.",
            )
        if found:
            return found[0]
    return None


def user_config_path(environ: Mapping[str, str]) -> tuple[Path, bool]:
    """The user config file and whether it was named explicitly (by WIGGUM_CONFIG)."""
    explicit = environ.get("WIGGUM_CONFIG")
    if explicit:
        return Path(explicit).expanduser(), True
    return platformdirs.user_config_path("wiggum") / "config.toml", False


def read_document(path: Path) -> Document:
    """Read and parse one config file, refusing what cannot be a hand-written config."""

    def fail(message: str, line: int | None = None, hint: str = "") -> ConfigError:
        return ConfigError([Problem("", message, path, line)], hint)

    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise fail(f"is {size:,} bytes; a config file is at most {MAX_CONFIG_BYTES:,}")
        data = path.read_bytes()
    except IsADirectoryError:
        raise fail("is a folder, not a file") from None
    except OSError as exc:
        raise fail(f"cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise fail(f"is not UTF-8 text (byte 0x{byte:02x})", line, "Save it as UTF-8.") from None
    if not text.strip():
        raise fail(
            "is empty",
            hint="An empty config is most likely a failed write; restore it, or "
            "run `wiggum init --force` to write a fresh one.",
        )
    if path.suffix == ".cjs":
        return parse_cjs(text, path)
    return parse_toml(text, path)


def load_config(
    cwd: Path,
    environ: Mapping[str, str] | None = None,
    overrides: Iterable[Override] = (),
    *,
    require_project: bool = False,
    home: Path | None = None,
) -> LoadedConfig:
    """Build the effective configuration for a project found from `cwd` upward."""
    environ = os.environ if environ is None else environ
    home = Path(os.path.realpath(home or Path.home()))
    layers: list[Layer] = []

    user_path, explicit = user_config_path(environ)
    user_file = user_path if explicit or user_path.is_file() else None
    if user_file is not None:
        if not user_file.is_file() and not user_file.is_dir():
            raise ConfigError(
                [Problem("", "does not exist (named by WIGGUM_CONFIG)", user_file)],
                "Create it, or unset WIGGUM_CONFIG.",
            )
        layers.append(document_layer(read_document(user_file), "user"))

    project_file = find_project_file(cwd)
    if project_file is None and require_project:
        missing = Problem("", f"no {' or '.join(PROJECT_FILES)} here or above", cwd)
        raise ConfigError([missing], INIT_HINT)
    if project_file is not None:
        layers.append(document_layer(read_document(project_file), "project"))
    layers.append(env_layer(environ))
    layers.append(flag_layer(overrides))

    merged: dict[str, Sourced] = {}
    for layer in layers:
        merged.update(layer)
    config = build_config({key: item.value for key, item in merged.items()})
    sources = {key: merged[key].source if key in merged else Source("default") for key in SETTINGS}
    project_root = Path(os.path.realpath(project_file.parent if project_file else cwd))
    problems = check_config(config, sources, project_root, home)
    if problems:
        raise ConfigError(problems, "See docs/configuration.md for what each key accepts.")
    return LoadedConfig(config, sources, project_root, project_file, user_file)


def check_config(
    config: Config, sources: Mapping[str, Source], project_root: Path, home: Path
) -> list[Problem]:
    """Checks that need the merged config: relations between keys, and path safety."""
    problems: list[Problem] = []

    def problem(key: str, message: str, index: int | None = None) -> None:
        label, line = sources[key].location(index)
        file = Path(label) if sources[key].kind in ("user", "project") else None
        shown = f"{key}[{index}]" if index is not None else key
        if file is None and sources[key].kind != "default":
            message = f"{message} (set by {sources[key].describe()})"
        problems.append(Problem(shown, message, file, line))

    if config.agent.preset == "custom" and not config.agent.command:
        problem("agent.preset", '"custom" needs agent.command, e.g. command = ["my-agent"]')
    if config.sandbox.enabled:
        danger = writable_path_danger(project_root, project_root, home)
        if danger:
            problem(
                "sandbox.enabled", f"cannot sandbox the project folder {project_root}: {danger}"
            )
    for index, raw in enumerate(config.sandbox.allow_paths):
        resolved = resolve_user_path(raw, project_root, home)
        danger = writable_path_danger(resolved, project_root, home)
        if danger:
            shown = raw if str(resolved) == raw else f"{raw} (resolves to {resolved})"
            problem("sandbox.allowPaths", f"refusing to make {shown} writable: {danger}", index)
    for index, raw in enumerate(config.sandbox.read_only_paths):
        resolved = resolve_user_path(raw, project_root, home)
        danger = readable_path_danger(resolved, home)
        if danger:
            shown = raw if str(resolved) == raw else f"{raw} (resolves to {resolved})"
            problem("sandbox.readOnlyPaths", f"refusing to expose {shown}: {danger}", index)
    return problems
