"""A parsed configuration file: plain data plus the line each key came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KeyPath = tuple[str | int, ...]


def format_key(path: KeyPath) -> str:
    """("sandbox", "allowPaths", 2) -> "sandbox.allowPaths[2]"."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


@dataclass(frozen=True)
class Document:
    file: Path | None
    data: Mapping[str, Any]
    lines: Mapping[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of `path`, or of its nearest ancestor whose line is known."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None
