from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wiggum.__main__ import main

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own HOME and XDG folders and no WIGGUM_* variables.

    The home folder is a sibling of `tmp_path`, never inside it: a project that contains
    the home directory is (rightly) refused by validation.
    """
    home = tmp_path_factory.mktemp("home")
    for var in list(os.environ):
        if var.startswith("WIGGUM_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    yield home


@dataclass
class Result:
    code: int
    out: str
    err: str


RunWiggum = Callable[..., Result]


@pytest.fixture
def wiggum(capsys: pytest.CaptureFixture[str]) -> RunWiggum:
    """Run the real entry point in-process and capture its exit code and output."""

    def run(*args: str) -> Result:
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run
