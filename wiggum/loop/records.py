"""Run records: `.wiggum/runs/<run-id>/run.json` plus one log per iteration.

The record is rewritten atomically (write a temporary file, fsync, rename) after every
iteration, so a crash at any moment leaves either the previous complete record or the new
one, never half of one.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

RECORD_VERSION = 1
STATE_DIR = ".wiggum"


def runs_dir(project: Path) -> Path:
    return project / STATE_DIR / "runs"


def new_run_id(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(2)}"


def iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


@dataclass
class Iteration:
    number: int
    started_at: str
    duration_seconds: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    promise_seen: bool = False
    log: str = ""
    denials: list[str] = field(default_factory=list)
    checkpoint: str | None = None  # the commit made after the iteration


@dataclass
class RunRecord:
    run_id: str
    project: str
    wiggum_version: str
    config_digest: str
    backend: str
    backend_detail: str
    network: bool
    argv: list[str]
    started_at: str
    finished_at: str | None = None
    stop_reason: str | None = None
    iterations: list[Iteration] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        # Field by field rather than through asdict(): it is rewritten after every iteration.
        head = {_camel(f.name): getattr(self, f.name) for f in fields(self)}
        head["iterations"] = [
            {_camel(f.name): getattr(i, f.name) for f in fields(i)} for i in self.iterations
        ]
        return {"version": RECORD_VERSION, **head}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` so that readers see the old or the new file, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save(record: RunRecord, folder: Path) -> None:
    write_atomically(folder / "run.json", json.dumps(record.to_json(), indent=2) + "\n")


def list_runs(project: Path) -> list[dict[str, Any]]:
    """Every readable run record of the project, newest first."""
    out = []
    for path in sorted(runs_dir(project).glob("*/run.json"), reverse=True):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return out


def find_run(project: Path, run_id: str | None) -> Path:
    """The folder of run `run_id` (a unique prefix is enough), or of the newest run."""
    from wiggum.errors import UsageError

    folders = sorted((p for p in runs_dir(project).glob("*") if p.is_dir()), reverse=True)
    if not folders:
        raise UsageError(f"no runs recorded in {runs_dir(project)}; start one with `wiggum run`")
    if run_id is None:
        return folders[0]
    matches = [f for f in folders if f.name.startswith(run_id)]
    if len(matches) != 1:
        known = ", ".join(f.name for f in folders[:5])
        what = "no run" if not matches else "more than one run"
        raise UsageError(f"{what} matches {run_id!r}; recent runs: {known}")
    return matches[0]
