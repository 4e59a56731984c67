"""wiggum doctor: real probes on this machine, and diagnoses fed through a fake environment."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, RunWiggum
from wiggum.doctor.model import DoctorContext, Result, Status
from wiggum.doctor.report import GROUPS, Report, run_doctor

HAS_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".ralph").mkdir(parents=True)
    (root / ".ralph/PROMPT.md").write_text("work\n")
    (root / "ralph.toml").write_text('[agent]\npreset = "demo"\n[sandbox]\nnetwork = false\n')
    return root


def doctor(project: Path, environ: dict[str, str] | None = None, **kwargs: object) -> Report:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **(environ or {})}
    return run_doctor(DoctorContext(project, env, **kwargs))  # type: ignore[arg-type]


def by_id(report: Report) -> dict[str, Result]:
    return {r.id: r for r in report.results}


def fake(folder: Path, name: str, body: str) -> str:
    """An executable `name` in `folder`; returns a PATH with `folder` first."""
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return f"{folder}:{os.environ['PATH']}"


BWRAP_HEAD = (
    'case "$1" in --version) echo "bubblewrap 0.9.0"; exit 0;; '
    '--help) echo "  --disable-userns"; exit 0;; esac\n'
)


@needs_bwrap
def test_this_machine_would_run(project: Path) -> None:
    report = doctor(project)
    results = by_id(report)
    assert report.would_run and report.headline.status is Status.OK
    assert "bwrap" in report.headline.summary
    assert results["bwrap.probe"].status is Status.OK
    for result in report.results:
        assert result.status is not Status.FAIL, result
        assert result.summary  # every check says something, a skip included


@needs_bwrap
def test_probe_really_runs_bwrap(project: Path, tmp_path: Path) -> None:
    path = fake(tmp_path / "bin", "bwrap", BWRAP_HEAD + "exit 1\n")
    report = doctor(project, {"PATH": path})
    assert by_id(report)["bwrap.probe"].status is Status.FAIL
    assert not report.would_run and report.headline.status is Status.FAIL
    assert by_id(report)["bwrap.installed"].status is Status.OK  # on PATH, yet it does not work


@pytest.mark.parametrize(
    ("stderr", "files", "cause", "fix"),
    [
        (
            "bwrap: setting up uid map: Permission denied",
            {"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n"},
            "AppArmor blocks unprivileged user namespaces",
            "bwrap-userns-restrict",
        ),
        (
            "bwrap: No permissions to creating new namespace, likely because the kernel does not "
            "allow non-privileged user namespaces.",
            {"/proc/sys/kernel/unprivileged_userns_clone": "0\n"},
            "unprivileged_userns_clone = 0",
            "sysctl kernel.unprivileged_userns_clone=1",
        ),
        (
            "bwrap: Creating new namespace failed: Operation not permitted",
            {"/proc/sys/user/max_user_namespaces": "0\n"},
            "max_user_namespaces = 0",
            "user.max_user_namespaces=15000",
        ),
        (
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
            {"/.dockerenv": ""},
            "unprivileged container",
            "seccomp=unconfined",
        ),
        (
            "bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
            {"/run/.containerenv": ""},
            "cannot mount /proc",
            "unmask=ALL",
        ),
    ],
)
def test_diagnosis_from_captured_failures(
    project: Path, tmp_path: Path, stderr: str, files: dict[str, str], cause: str, fix: str
) -> None:
    path = fake(tmp_path / "bin", "bwrap", BWRAP_HEAD + f'echo "{stderr}" >&2\nexit 1\n')
    report = doctor(project, {"PATH": path}, read=files.get)
    probe = by_id(report)["bwrap.probe"]
    assert probe.status is Status.FAIL
    assert cause in probe.summary, probe
    assert fix in probe.fix, probe
    assert stderr in probe.detail


def test_hung_probe_and_hung_agent_version_are_bounded(project: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake(bin_dir, "bwrap", BWRAP_HEAD + "sleep 60\n")
    path = fake(bin_dir, "slow-agent", "sleep 60\n")
    (project / "ralph.toml").write_text(
        '[agent]\npreset = "custom"\ncommand = ["slow-agent"]\n[sandbox]\nnetwork = false\n'
    )
    began = time.monotonic()
    report = doctor(project, {"PATH": path}, command_timeout=0.5, probe_timeout=1.0)
    assert time.monotonic() - began < 8
    results = by_id(report)
    assert results["agent.version"].status is Status.WARN
    assert "did not answer" in results["agent.version"].summary
    if HAS_BWRAP or shutil.which("bwrap", path=path):
        assert "did not start within 1 s" in results["bwrap.probe"].summary


@pytest.mark.parametrize(
    ("release", "status"),
    [
        ("6.6.36.3-microsoft-standard-WSL2", Status.OK),
        ("4.4.0-19041-Microsoft", Status.FAIL),
        ("6.1.0-13-amd64", Status.OK),
    ],
)
def test_wsl(project: Path, release: str, status: Status) -> None:
    files = {"/proc/sys/kernel/osrelease": release}
    result = by_id(doctor(project, read=files.get, system="linux"))["platform.wsl"]
    assert result.status is status
    if status is Status.FAIL:
        assert "wsl --set-version" in result.fix


def test_container_engine_found_through_path(project: Path, tmp_path: Path) -> None:
    path = fake(tmp_path / "bin", "podman", 'echo "{}"\n')
    fake(tmp_path / "bin", "docker", "exit 1\n")
    result = by_id(doctor(project, {"PATH": path}))["container.engine"]
    assert result.status is Status.OK and "podman" in result.summary


def test_missing_agent_blocks_and_names_the_fix(project: Path) -> None:
    (project / "ralph.toml").write_text('[agent]\npreset = "codex"\n')
    report = doctor(project, {"PATH": "/usr/bin:/bin"})
    assert by_id(report)["agent.binary"].status is Status.FAIL
    assert "npm install -g @openai/codex" in by_id(report)["agent.binary"].fix
    assert not report.would_run and "'codex' is not on PATH" in report.headline.summary


def test_network_conflict_is_a_warning(project: Path, tmp_path: Path) -> None:
    path = fake(tmp_path / "bin", "claude", "echo 1.0.0\n")
    (project / "ralph.toml").write_text('[agent]\npreset = "claude"\n[sandbox]\nnetwork = false\n')
    result = by_id(doctor(project, {"PATH": path}))["agent.network"]
    assert result.status is Status.WARN and "needs the network" in result.summary


def test_invalid_config_is_shown_in_full(project: Path) -> None:
    (project / "ralph.toml").write_text("[loop]\nmaxIterations = 0\n[sandbox]\nmode = 3\n")
    report = doctor(project)
    valid = by_id(report)["config.valid"]
    assert valid.status is Status.FAIL and "2 problem(s)" in valid.summary
    assert "loop.maxIterations" in valid.detail and "sandbox.mode" in valid.detail
    assert not report.would_run


@needs_bwrap
def test_cli_json_and_exit_codes(project: Path, wiggum: RunWiggum) -> None:
    done = wiggum("-C", str(project), "doctor", "--json")
    assert done.code == 0, done.out
    data = json.loads(done.out)
    assert data["version"] == 1 and data["wouldRun"] is True
    assert data["headline"]["id"] == "selection.run"
    assert {c["id"] for c in data["checks"]} >= {"bwrap.probe", "config.valid", "agent.binary"}
    assert all(
        set(c) == {"id", "group", "status", "summary", "detail", "fix"} for c in data["checks"]
    )
    only = json.loads(wiggum("-C", str(project), "doctor", "--json", "--check", "bwrap").out)
    assert {c["group"] for c in only["checks"]} == {"bwrap"}
    (project / ".ralph/PROMPT.md").unlink()
    assert wiggum("-C", str(project), "doctor").code == 1


@needs_bwrap
def test_cli_text_is_readable_without_colour(project: Path, wiggum: RunWiggum) -> None:
    text = wiggum("-C", str(project), "doctor").out
    assert "\x1b[" not in text
    assert "✓ OK   wiggum run would start" in text
    assert re.search(r"^bwrap$", text, re.MULTILINE)


DOC = (REPO / "docs/doctor.md").read_text(encoding="utf-8")
IDS = sorted(
    {
        m
        for path in (REPO / "wiggum/doctor").glob("*.py")
        for m in re.findall(r'Result\(\s*"([a-z-]+\.[a-z-]+)"', path.read_text())
    }
)


def test_the_id_list_is_not_empty() -> None:
    assert len(IDS) >= 20 and "bwrap.probe" in IDS


@pytest.mark.parametrize("check_id", IDS)
def test_every_check_is_documented(check_id: str) -> None:
    assert f"`{check_id}`" in DOC


@pytest.mark.parametrize("group", GROUPS)
def test_every_group_is_documented(group: str) -> None:
    assert f"`--check {group}`" in DOC


def test_promise_alone_on_a_prompt_line_is_a_warning(project: Path) -> None:
    (project / ".ralph/PROMPT.md").write_text("Do it.\n\n<promise>COMPLETE</promise>\n")
    result = by_id(doctor(project))["paths.prompt"]
    assert result.status is Status.WARN and "stands alone" in result.summary
    (project / ".ralph/PROMPT.md").write_text("When done, print <promise>COMPLETE</promise>.\n")
    assert by_id(doctor(project))["paths.prompt"].status is Status.OK
