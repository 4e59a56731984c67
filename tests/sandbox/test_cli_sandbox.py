"""`wiggum sandbox explain` and `wiggum sandbox exec` through the real entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import RunWiggum

HAS_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ralph.toml").write_text('[agent]\nenv = ["MY_TOKEN"]\n[sandbox]\nnetwork = false\n')
    return root


@needs_bwrap
def test_explain_text_shows_argv_and_policy(project: Path, wiggum: RunWiggum) -> None:
    result = wiggum("-C", str(project), "sandbox", "explain")
    assert result.code == 0, result.err
    assert result.out.startswith("backend: bwrap (bubblewrap ")
    assert "network: off" in result.out
    assert f"  {project}\n" in result.out  # writable
    assert "--unshare-net" in result.out and "-- claude -p" in result.out


@needs_bwrap
def test_explain_redacts_secret_values(
    project: Path, wiggum: RunWiggum, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TOKEN", "tok-123456")
    result = wiggum("-C", str(project), "sandbox", "explain", "--json")
    data = json.loads(result.out)
    assert "tok-123456" not in result.out
    argv = data["argv"]
    index = argv.index("MY_TOKEN")
    assert argv[index - 1] == "--setenv" and argv[index + 1] == "<redacted>"
    assert data["version"] == 1 and data["backend"] == "bwrap"
    assert "MY_TOKEN" in data["policy"]["environment"]


def test_explain_off_shows_the_bare_command(project: Path, wiggum: RunWiggum) -> None:
    result = wiggum("-C", str(project), "sandbox", "explain", "--mode", "off", "--json")
    data = json.loads(result.out)
    assert data["backend"] == "none" and data["argv"][0] == "claude"


def test_explain_missing_backend_exits_1_with_the_fix(project: Path, wiggum: RunWiggum) -> None:
    result = wiggum("-C", str(project), "sandbox", "explain", "--mode", "sandbox-exec")
    assert result.code == 1
    assert "only on macOS" in result.err and "Traceback" not in result.err


@needs_bwrap
def test_exec_returns_the_command_exit_code(project: Path, wiggum: RunWiggum) -> None:
    assert wiggum("-C", str(project), "sandbox", "exec", "--", "sh", "-c", "exit 7").code == 7
    assert wiggum("-C", str(project), "sandbox", "exec", "--", "true").code == 0


@needs_bwrap
def test_exec_is_sandboxed(project: Path, wiggum: RunWiggum, isolated_env: Path) -> None:
    secret = str(isolated_env / "secret")
    (isolated_env / "secret").write_text("x")
    assert wiggum("-C", str(project), "sandbox", "exec", "--", "cat", secret).code != 0
    # Control: the same command with the sandbox off reads it.
    bare = wiggum("-C", str(project), "sandbox", "exec", "--mode", "off", "--", "cat", secret)
    assert bare.code == 0


def test_exec_with_sandbox_off_warns(project: Path, wiggum: RunWiggum) -> None:
    result = wiggum("-C", str(project), "sandbox", "exec", "--mode", "off", "--", "true")
    assert result.code == 0
    assert "warning: the sandbox is off" in result.err


def test_exec_that_cannot_start_exits_1_before_running(
    project: Path, wiggum: RunWiggum, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    marker = tmp_path / "ran"
    result = wiggum(
        "-C",
        str(project),
        "sandbox",
        "exec",
        "--mode",
        "bwrap",
        "--",
        "/bin/sh",
        "-c",
        f"touch {marker}",
    )
    assert result.code == 1
    assert "bwrap sandbox is not installed" in result.err and "apt-get" in result.err
    assert not marker.exists()


def test_exec_needs_a_command(project: Path, wiggum: RunWiggum) -> None:
    assert wiggum("-C", str(project), "sandbox", "exec").code == 2


@needs_bwrap
def test_exec_no_network_flag_overrides_config(tmp_path: Path, wiggum: RunWiggum) -> None:
    (tmp_path / "ralph.toml").write_text("[sandbox]\nnetwork = true\n")
    probe = "cat /proc/net/dev | grep -c :"  # only lo when the network is unshared
    on = wiggum("-C", str(tmp_path), "sandbox", "exec", "--", "sh", "-c", f"test $({probe}) -gt 1")
    off = wiggum(
        "-C",
        str(tmp_path),
        "sandbox",
        "exec",
        "--no-network",
        "--",
        "sh",
        "-c",
        f"test $({probe}) -eq 1",
    )
    assert (on.code, off.code) == (0, 0), (on, off)
