"""Doctor's building blocks: results, the injectable environment, and the check registry.

A check is a small function of a `DoctorContext` returning one `Result`. Everything a check
learns about the machine goes through the context (`read`, `run`, `environ`, ...), so tests
feed captured real-world outputs and sysctl values through a fake one.
"""

from __future__ import annotations

import enum
import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from wiggum.config.layers import Override


class Status(enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class Result:
    id: str  # stable: "bwrap.probe"; documented in docs/doctor.md
    status: Status
    summary: str
    detail: str = ""
    fix: str = ""

    @property
    def group(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Ran:
    """What a command printed; `code` is None when it timed out or could not start."""

    code: int | None
    out: str = ""
    err: str = ""

    @property
    def ok(self) -> bool:
        return self.code == 0


def run_command(argv: Sequence[str], timeout: float) -> Ran:
    """Run a short command, bounded: a hung `--version` must not hang doctor."""
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        return Ran(None, "", exc.strerror or str(exc))
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        from wiggum.proc import stop

        stop(process, grace=0.2)  # type: ignore[arg-type]
        process.communicate()
        return Ran(None, "", f"timed out after {timeout:g} s")
    return Ran(process.returncode, out, err)


def read_file(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@dataclass
class DoctorContext:
    """What checks may know about the world; tests replace any part of it."""

    cwd: Path
    environ: Mapping[str, str]
    overrides: Sequence[Override] = ()
    system: str = ""  # "linux", "darwin"; empty: this machine's
    machine: str = ""
    read: Callable[[str], str | None] = read_file
    run: Callable[[Sequence[str], float], Ran] = run_command
    command_timeout: float = 2.0
    probe_timeout: float = 3.0
    memo: dict[str, Any] = field(default_factory=dict)
    cleanup: list[Path] = field(default_factory=list)  # scratch folders to remove at the end
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        import platform

        from wiggum.sandbox.host import platform_name

        self.system = self.system or platform_name()
        self.machine = self.machine or platform.machine()

    @cached_property
    def loaded(self) -> Any:
        """The loaded configuration, or the ConfigError that loading raised."""
        from wiggum.config.loader import load_config
        from wiggum.errors import ConfigError

        try:
            return load_config(self.cwd, self.environ, self.overrides)
        except ConfigError as exc:
            return exc

    @cached_property
    def built(self) -> Any:
        """(preset, host facts, policy) for a valid config, the error otherwise, or None."""
        from wiggum.config.loader import LoadedConfig
        from wiggum.errors import WiggumError
        from wiggum.sandbox.engine import build_for

        if not isinstance(self.loaded, LoadedConfig):
            return None
        try:
            return build_for(self.loaded, self.environ)
        except WiggumError as exc:
            return exc

    def which(self, name: str) -> str | None:
        import shutil

        return shutil.which(name, path=self.environ.get("PATH", os.defpath))


Check = Callable[[DoctorContext], Result]
