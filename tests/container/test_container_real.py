"""The container backend on this machine: podman with gVisor (runsc), over the host's own
root filesystem read-only (no image registry is reachable here). The escape attempts of the
sandbox suite that make sense for containers run against it, with their control arms."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.test_escape import ATTACKS, Attack, Listener, attempt, connect
from tests.sandbox.world import Runner, World

CONFIG = """\
[sandbox]
mode = "container"
network = false

[sandbox.container]
engine = "podman"
runtime = "runsc"
rootfs = "/"
# gVisor on this machine: no cgroups to use, no network stack to set up, low ulimits.
extraFlags = ["--runtime-flag", "network=none", "--runtime-flag", "ignore-cgroups",
              "--ulimit", "nofile=1024:1024"]

[sandbox.limits]
processes = 1024
"""


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "rootless podman is not set up on this machine; these tests run as root"
    if not (shutil.which("podman") and shutil.which("runsc")):
        return "podman and runsc are not installed (apt-get install podman runsc)"
    return None


SKIP = _skip_reason()
pytestmark = [pytest.mark.container, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]
# Attacks on what a container does not share with the host, or that gVisor changes.
SKIPPED_ATTACKS = {"create a nested user namespace"}


@pytest.fixture
def world() -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="wiggum-container-", dir="/var/tmp"))
    base.chmod(0o755)
    made = World(base, Runner("root"))
    made.set_config(CONFIG)
    yield made
    shutil.rmtree(base, ignore_errors=True)


def containers() -> set[str]:
    done = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    )
    return {name for name in done.stdout.split() if name.startswith("wiggum-")}


@pytest.mark.parametrize(
    "attack", [a for a in ATTACKS if a.name not in SKIPPED_ATTACKS], ids=lambda a: a.name
)
def test_attack_fails_in_the_container(world: World, attack: Attack) -> None:
    attempt(world, attack)


def test_host_loopback_unreachable(world: World) -> None:
    listener = Listener(__import__("socket").AF_INET, ("127.0.0.1", 0))
    try:
        port = str(listener.sock.getsockname()[1])
        connect(world, "tcp", port, sandboxed=True)
        assert not listener.seen()
        connect(world, "tcp", port, sandboxed=False)
        assert listener.seen()
    finally:
        listener.close()


def test_project_writable_files_belong_to_the_user(world: World) -> None:
    result = world.sh("echo made > made.txt && cat README.md", sandboxed=True)
    assert result.code == 0, result
    made = world.project / "made.txt"
    assert made.read_text() == "made\n" and made.stat().st_uid == os.getuid()
    assert sorted(p.name for p in world.project.iterdir()) == [
        ".git",
        ".wiggum",
        "README.md",
        "made.txt",
        "ralph.toml",
    ]  # no mount points left


def run(world: World, *args: str, **popen: Any) -> subprocess.Popen[str]:
    env = {**world.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [sys.executable, "-m", "wiggum", "-C", str(world.project), "run", *args]
    return subprocess.Popen(argv, env=env, text=True, **popen)


def prepare_loop(world: World, script: str, **loop: str) -> None:
    (world.project / ".ralph").mkdir(exist_ok=True)
    (world.project / ".ralph/PROMPT.md").write_text("go\n")
    extra = "".join(f"{k} = {v}\n" for k, v in loop.items())
    world.set_config(
        f'[agent]\npreset = "custom"\ncommand = ["/bin/sh", "-c", "{script}"]\n'
        f"requiresNetwork = false\n[loop]\nmaxIterations = 2\n{extra}" + CONFIG
    )


def test_no_container_left_after_a_timeout(world: World) -> None:
    before = containers()
    prepare_loop(world, "sleep 120", iterationTimeout="2", maxConsecutiveFailures="1")
    process = run(world, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert containers() == before


def test_no_container_left_after_an_interrupt(world: World) -> None:
    before = containers()
    prepare_loop(world, "echo started; sleep 120")
    process = run(world, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the agent's first line: its container is running
        assert line.strip() == "started", (line, process.stderr.read() if process.stderr else "")
        assert containers() != before
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert containers() == before
