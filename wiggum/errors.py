"""The exception root and the documented exit codes.

Every error a user can cause is a `WiggumError` carrying the message they need; `cli.main`
is the one place that turns exceptions into exit codes.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class ExitStatus(enum.IntEnum):
    OK = 0
    FAILED = 1  # the job ran and failed (a run that did not complete, a doctor check)
    USAGE = 2  # bad flags, bad or missing configuration
    UNEXPECTED = 3  # a bug in wiggum; the traceback goes to a log file
    INTERRUPTED = 130


class WiggumError(Exception):
    """A failure with a message meant for the user: no traceback is shown."""

    exit_status = ExitStatus.FAILED


class UsageError(WiggumError):
    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a configuration, with where it is."""

    key: str  # key path such as "sandbox.allowPaths[2]"; "" for the file as a whole
    message: str
    file: Path | None = None
    line: int | None = None

    def location(self) -> str:
        """`file:line`, `file`, or "" when the problem is not in a file."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else str(self.file)

    def __str__(self) -> str:
        parts = [part for part in (self.location(), self.key) if part]
        return ": ".join([*parts, self.message])


class ConfigError(WiggumError):
    """The configuration cannot be used; lists every problem found, not just the first."""

    exit_status = ExitStatus.USAGE

    def __init__(self, problems: Sequence[Problem], hint: str = "") -> None:
        self.problems = tuple(problems)
        self.hint = hint
        lines = [str(p) for p in self.problems]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))
