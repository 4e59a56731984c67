"""`config show`: the effective configuration as TOML-like text or a versioned JSON envelope."""

from __future__ import annotations

import json
from typing import Any

import click

from wiggum.config.loader import LoadedConfig
from wiggum.config.schema import SETTINGS, Size, config_as_dict

JSON_SCHEMA_VERSION = 1
_ALIGN_MAX = 44  # longer lines are not padded, so one long list does not push every comment
_UNITS = (("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024))


def format_size(value: int) -> str:
    for unit, factor in _UNITS:
        if value and value % factor == 0:
            return f"{value // factor}{unit}"
    return str(value)


def format_value(key: str, value: Any) -> str:
    """A value as it would be written in ralph.toml."""
    if value is None:
        return "(unset)"
    if isinstance(SETTINGS[key].kind, Size):
        return json.dumps(format_size(value)) if value else "0"
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def render_text(loaded: LoadedConfig) -> str:
    lines = [
        f"# project folder: {loaded.project_root}",
        f"# project file:   {loaded.project_file or '(none found; showing defaults)'}",
        f"# user file:      {loaded.user_file or '(none)'}",
        "# lists from a higher layer replace lower ones; see docs/configuration.md",
    ]
    section = None
    rows: list[tuple[str, str, str]] = []
    for key, spec in SETTINGS.items():
        value = _get(loaded, spec.attrs)
        rows.append((key, format_value(key, value), loaded.sources[key].describe()))
    width = min(_ALIGN_MAX, max(len(f"{k.rsplit('.', 1)[1]} = {v}") for k, v, _ in rows))
    for key, shown, source in rows:
        parent, name = key.rsplit(".", 1)
        if parent != section:
            section = parent
            lines.append(click.style(f"\n[{parent}]", bold=True))
        text = f"{name} = {shown}".ljust(width)
        default = source == "default"
        comment = click.style(f"# {source}", dim=default, fg=None if default else "cyan")
        lines.append(f"{text}  {comment}")
    return "\n".join(lines)


def render_json(loaded: LoadedConfig) -> str:
    envelope = {
        "version": JSON_SCHEMA_VERSION,
        "projectRoot": str(loaded.project_root),
        "projectFile": str(loaded.project_file) if loaded.project_file else None,
        "userFile": str(loaded.user_file) if loaded.user_file else None,
        "config": config_as_dict(loaded.config),
        "sources": {
            key: {"kind": s.kind, "label": s.label or None, "line": s.line}
            for key, s in loaded.sources.items()
        },
    }
    return json.dumps(envelope, indent=2, ensure_ascii=False)


def _get(loaded: LoadedConfig, attrs: tuple[str, ...]) -> Any:
    value: Any = loaded.config
    for attr in attrs:
        value = getattr(value, attr)
    return value
