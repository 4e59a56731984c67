"""Rendering the project template without ever leaving a half-written project.

copier renders into a temporary folder; the result is then compared with the project. Files
that would change an existing file are conflicts: without `force`, wiggum lists them and
writes nothing. Otherwise every file is written atomically, and an interruption (Ctrl-C)
while writing puts back what was there before.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from wiggum.errors import WiggumError
from wiggum.loop.records import write_atomically
from wiggum.scaffold.answers import Answers


class Conflict(WiggumError):
    pass


@dataclass(frozen=True)
class Plan:
    """What rendering would do, file by file (paths relative to the project)."""

    files: dict[str, bytes]  # every rendered file and its content
    new: tuple[str, ...]
    changed: tuple[str, ...]  # exist with other content: written only with force
    unchanged: tuple[str, ...]


def template_dir() -> Path:
    """The template, shipped inside the package (found in an installed wheel too)."""
    return Path(str(resources.files("wiggum") / "templates" / "project"))


def render(answers: Answers) -> dict[str, bytes]:
    """Every file the template renders for `answers`."""
    import copier

    with tempfile.TemporaryDirectory(prefix="wiggum-init-") as scratch:
        out = Path(scratch) / "out"
        copier.run_copy(
            str(template_dir()),
            str(out),
            data=answers.as_data(),
            defaults=True,
            quiet=True,
            unsafe=False,
            overwrite=True,
        )
        return {
            str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
        }


def plan(project: Path, files: dict[str, bytes]) -> Plan:
    new, changed, unchanged = [], [], []
    for name, content in files.items():
        target = project / name
        if not target.exists():
            new.append(name)
        elif target.is_file() and target.read_bytes() == content:
            unchanged.append(name)
        else:
            changed.append(name)
    return Plan(files, tuple(new), tuple(changed), tuple(unchanged))


def apply(project: Path, todo: Plan, *, force: bool) -> list[str]:
    """Write the plan; the names written. All or nothing."""
    if todo.changed and not force:
        raise Conflict(
            "these files exist and would change: "
            + ", ".join(todo.changed)
            + ". Nothing was written. Compare with `wiggum init --dry-run`, then re-run with "
            "--force to overwrite them."
        )
    backups: dict[Path, bytes | None] = {}
    written = []
    try:
        for name in (*todo.new, *todo.changed):
            target = project / name
            backups[target] = target.read_bytes() if target.is_file() else None
            _write(target, todo.files[name])
            written.append(name)
    except BaseException:
        _restore(backups)
        raise
    return written


def _write(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, content.decode("utf-8"))


def _restore(backups: dict[Path, bytes | None]) -> None:
    for target, content in backups.items():
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.write_bytes(content)
