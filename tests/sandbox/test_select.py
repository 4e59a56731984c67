from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sandbox.fakes import policy
from wiggum.sandbox.select import (
    Backend,
    Failure,
    SandboxUnavailable,
    Selection,
    make_backend,
    probe,
    resolve_mode,
    select_backend,
)

HAS_BWRAP = shutil.which("bwrap") is not None


def never_called(backend: Backend) -> Failure | None:
    raise AssertionError("the probe must not run")


def fails(backend: Backend) -> Failure | None:
    return Failure(backend.name, "cannot-start", "cannot start here: test", "fix it")


def works(backend: Backend) -> Failure | None:
    return None


def select(
    mode: str = "auto",
    *,
    required: bool = True,
    enabled: bool = True,
    system: str = "linux",
    check: Callable[[Backend], Failure | None] = works,
    environ: dict[str, str] | None = None,
) -> Selection:
    return select_backend(
        enabled=enabled,
        mode=mode,
        required=required,
        system=system,
        policy=policy(),
        environ=environ or dict(os.environ),
        check=check,
    )


@pytest.mark.parametrize(
    ("mode", "system", "expected"),
    [
        ("auto", "linux", "bwrap"),
        ("auto", "darwin", "sandbox-exec"),
        ("auto", "freebsd", "none"),
        ("bwrap", "darwin", "bwrap"),
        ("container", "linux", "container"),
    ],
)
def test_resolve_mode(mode: str, system: str, expected: str) -> None:
    assert resolve_mode(mode, system) == expected


@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
def test_auto_on_linux_selects_bwrap_after_the_probe() -> None:
    selection = select(check=works)
    assert selection.backend.name == "bwrap" and selection.sandboxed
    assert selection.warnings == ()


def test_required_and_missing_raises_before_any_probe(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        select(environ={"PATH": str(tmp_path)}, check=never_called)
    assert info.value.failure.kind == "missing"
    assert "apt-get install bubblewrap" in str(info.value)


@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
def test_required_and_failing_probe_raises() -> None:
    with pytest.raises(SandboxUnavailable, match="cannot start here: test"):
        select(check=fails)


@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
def test_not_required_falls_back_with_a_loud_warning() -> None:
    selection = select(required=False, check=fails)
    assert selection.backend.name == "none" and not selection.sandboxed
    assert "RUNNING WITHOUT A SANDBOX" in selection.warnings[0]


@pytest.mark.parametrize("how", [{"enabled": False}, {"mode": "off"}])
def test_sandbox_off_is_unsandboxed_with_a_warning(how: dict[str, object]) -> None:
    selection = select(check=never_called, **how)  # type: ignore[arg-type]
    assert not selection.sandboxed
    assert "the sandbox is off" in selection.warnings[0]


def test_sandbox_exec_is_missing_on_linux() -> None:
    built = make_backend("sandbox-exec", policy(), {})
    assert isinstance(built, Failure) and built.kind == "missing"


def test_unsandboxed_launch_is_the_command_itself() -> None:
    selection = select(mode="off", check=never_called)
    launch = selection.backend.launch(["echo", "hi"])
    assert launch.argv == ("echo", "hi") and launch.backend == "none"


def fake_bwrap(folder: Path, stderr: str) -> dict[str, str]:
    script = folder / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "bubblewrap 0.9.0"; exit 0;; '
        '--help) echo "  --disable-userns"; exit 0;; esac\n'
        f"printf '%s\\n' '{stderr}' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


@pytest.mark.parametrize(
    ("stderr", "words"),
    [
        ("", "bwrap failed"),
        ("bwrap: setting up uid map: Permission denied", "refused to create a user namespace"),
        ("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", "unprivileged container"),
    ],
)
def test_probe_runs_the_real_binary_and_diagnoses(tmp_path: Path, stderr: str, words: str) -> None:
    environ = fake_bwrap(tmp_path, stderr)
    built = make_backend("bwrap", policy(project=tmp_path), environ)
    assert isinstance(built, Backend) and str(tmp_path / "bwrap") in built.launch(["x"]).argv
    failure = probe(built)
    assert failure is not None and failure.kind == "cannot-start"
    assert words in failure.summary
