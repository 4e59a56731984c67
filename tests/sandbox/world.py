"""A fake user's world for escape tests: a home with secrets, a project, a sibling project.

Everything lives under /var/tmp (not /tmp, which the sandbox replaces anyway, and not
pytest's private tmp dirs, which an unprivileged user cannot enter). When the tests run as
root they also run as an ordinary user created for the purpose, because root ignores file
permissions and would prove nothing about them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from wiggum.config.loader import load_config
from wiggum.proc import Launch, remove_mount_points, start
from wiggum.sandbox.engine import Prepared, prepare
from wiggum.sandbox.select import Backend, Failure, probe

TEST_USER = "wiggum-sbx"
SECRET = "s3cr3t-4f1c2b"
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class Runner:
    """Who runs the commands: the current user, or an ordinary user when we are root."""

    name: str
    uid: int | None = None
    gid: int | None = None

    def wrap(self, argv: Sequence[str]) -> list[str]:
        if self.uid is None:
            return list(argv)
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--",
            *argv,
        ]

    def chown(self, path: Path) -> None:
        if self.uid is None:
            return
        for root, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                os.lchown(Path(root) / name, self.uid, self.gid or 0)
        os.lchown(path, self.uid, self.gid or 0)


def ordinary_user() -> Runner:
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", TEST_USER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(TEST_USER)
    return Runner("ordinary user", entry.pw_uid, entry.pw_gid)


def runners() -> list[Runner]:
    if os.geteuid() == 0 and shutil.which("useradd") and shutil.which("setpriv"):
        return [Runner("root"), ordinary_user()]
    return [Runner("current user")]


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class World:
    base: Path
    runner: Runner
    home: Path = field(init=False)
    project: Path = field(init=False)
    sibling: Path = field(init=False)
    environ: dict[str, str] = field(init=False)
    _prepared: Prepared | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.home = self.base / "home"
        self.project = self.home / "code" / "app"
        self.sibling = self.home / "code" / "other"
        self.environ = {
            "HOME": str(self.home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "SECRET_TOKEN": SECRET,
        }
        for folder, name in ((".ssh", "id_ed25519"), (".aws", "credentials")):
            (self.home / folder).mkdir(parents=True)
            (self.home / folder / name).write_text(f"{SECRET}\n")
        (self.home / ".bashrc").write_text("# the user's bashrc\n")
        (self.home / ".claude").mkdir()
        self.sibling.mkdir(parents=True)
        (self.sibling / "notes.txt").write_text(f"{SECRET}\n")
        self.project.mkdir(parents=True)
        (self.project / "ralph.toml").write_text("[sandbox]\nnetwork = false\n")
        (self.project / ".wiggum").mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.project / "README.md").write_text("hello\n")
        self.runner.chown(self.base)

    def set_config(self, text: str) -> None:
        (self.project / "ralph.toml").write_text(text)
        self._prepared = None

    def prepare(self) -> Prepared:
        """The sandbox `run` would use here (probed once per configuration)."""
        if self._prepared is None:
            loaded = load_config(self.project, self.environ, home=self.home)
            self._prepared = prepare(loaded, self.environ, check=self._probe_as_runner)
        return self._prepared

    def _probe_as_runner(self, backend: Backend) -> Failure | None:
        """The real probe, started as the user the commands run as."""
        as_runner = replace(backend, wrap=lambda cmd: tuple(self.runner.wrap(backend.wrap(cmd))))
        return probe(as_runner)

    def run(
        self, argv: Sequence[str], *, sandboxed: bool, stdin: int | None = None, timeout: float = 30
    ) -> Result:
        """Run `argv` inside the sandbox wiggum would build, or bare (the control arm)."""
        if sandboxed:
            launch = self.prepare().selection.backend.launch(argv)
            assert launch.backend in ("bwrap", "container"), launch.backend
        else:
            launch = Launch(tuple(argv), self.project, env=self.environ)
        launch = Launch(
            tuple(self.runner.wrap(launch.argv)),
            launch.cwd,
            launch.limits,
            launch.env,
            launch.mount_points,
            launch.backend,
        )
        process = start(
            launch,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            remove_mount_points(launch.mount_points)
        return Result(
            process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
        )

    def sh(self, script: str, *, sandboxed: bool, **kwargs: object) -> Result:
        return self.run(["/bin/sh", "-c", script], sandboxed=sandboxed, **kwargs)  # type: ignore[arg-type]

    def python(self, code: str, *, sandboxed: bool, **kwargs: object) -> Result:
        return self.run([SYSTEM_PYTHON, "-c", code], sandboxed=sandboxed, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(params=runners(), ids=lambda r: r.name.replace(" ", "-"))
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="wiggum-escape-", dir="/var/tmp"))
    base.chmod(0o755)
    try:
        yield World(base, request.param)
    finally:
        shutil.rmtree(base, ignore_errors=True)
