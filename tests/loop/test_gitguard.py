"""Each way of pointing git at another config is noticed (the end-to-end test, with a control
arm, is in test_run.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import git_commit, make_worktree
from wiggum.loop.gitguard import snapshot, tampered


def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def worktree(tmp_path: Path) -> Path:
    return make_worktree(tmp_path)[1]


def bare(project: Path) -> None:
    (project / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "objects").mkdir()
    (project / "refs").mkdir()


def retarget_worktree(project: Path) -> None:
    gitdir = Path((project / ".git").read_text().split()[1])
    (gitdir / "commondir").write_text("/tmp/evil\n")


def write(relative: str, text: str) -> Callable[[Path], None]:
    def act(project: Path) -> None:
        (project / relative).write_text(text)

    return act


CASES: dict[str, tuple[Callable[[Path], Path], Callable[[Path], None], str]] = {
    "commondir": (repo, write(".git/commondir", "../evil\n"), ".git/commondir appeared"),
    "config.worktree": (
        repo,
        write(".git/config.worktree", "[core]\n"),
        ".git/config.worktree appeared",
    ),
    "bare repository": (lambda p: p, bare, "bare repository"),
    ".git file rewritten": (worktree, write(".git", "gitdir: evil\n"), "the .git file now says"),
    "worktree commondir": (worktree, retarget_worktree, "commondir now points elsewhere"),
}


@pytest.mark.parametrize("case", CASES)
def test_tampering_is_noticed(tmp_path: Path, case: str) -> None:
    make, tamper, words = CASES[case]
    project = make(tmp_path)
    before = snapshot(project)
    assert tampered(before, snapshot(project)) == []  # nothing changed: nothing reported
    tamper(project)
    problems = tampered(before, snapshot(project))
    assert any(words in p for p in problems), problems


def test_ordinary_work_is_not_tampering(tmp_path: Path) -> None:
    project = repo(tmp_path)
    before = snapshot(project)
    (project / "config").mkdir()  # a Rails-style config/ folder is not a bare repository
    (project / "HEAD.md").write_text("x")
    git_commit(project, "work")
    assert tampered(before, snapshot(project)) == []
