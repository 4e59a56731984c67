"""`wiggum run` as a user runs it: a real process, fake agents, the real sandbox."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import platformdirs
import pytest

import wiggum
from tests.conftest import REPO
from tests.helpers import sleeping, wait_for
from tests.sandbox.world import SYSTEM_PYTHON, Runner, runners

HAS_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
PROMISE = "<promise>DONE</promise>"
PROMPT = f"Do the work.\nWhen it is all done, print {PROMISE} on a line of its own.\n"


@dataclass
class Project:
    """A project in a fake home under /var/tmp, owned by whoever runs wiggum in the test."""

    base: Path
    runner: Runner

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def root(self) -> Path:
        return self.home / "proj"

    def configure(self, script: str, *, sandbox: str = "", **loop: object) -> None:
        settings = {
            "completionPromise": PROMISE,
            "maxIterations": 4,
            "iterationTimeout": 30,
            **loop,
        }
        lines = "\n".join(f"{key} = {json.dumps(value)}" for key, value in settings.items())
        command = json.dumps(["/bin/sh", "-c", script])
        (self.root / "ralph.toml").write_text(
            f'[agent]\npreset = "custom"\ncommand = {command}\nrequiresNetwork = false\n'
            f"[loop]\n{lines}\n"
            f"[sandbox]\nnetwork = false\n{sandbox}\n"
        )

    def env(self, **extra: str) -> dict[str, str]:
        if self.runner.uid is None:
            path = str(REPO)
        else:  # the ordinary user cannot read root's checkout or venv: use a copy
            path = str(self.base / "pylib")
            for module in (wiggum, click, platformdirs):
                source = Path(module.__file__ or "").parent
                shutil.copytree(source, self.base / "pylib" / source.name, dirs_exist_ok=True)
        return {
            "HOME": str(self.home),
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
            "PYTHONPATH": path,
            **extra,
        }

    def argv(self, *args: str) -> list[str]:
        python = sys.executable if self.runner.uid is None else SYSTEM_PYTHON
        return self.runner.wrap([python, "-m", "wiggum", "-C", str(self.root), *args])

    def wiggum(
        self, *args: str, timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        environ = self.env(**env)
        self.runner.chown(self.base)
        return subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            env=environ,
            timeout=timeout,
            check=False,
        )

    def popen(self, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
        environ = self.env()
        self.runner.chown(self.base)
        return subprocess.Popen(self.argv(*args), env=environ, text=True, **kwargs)

    def record(self) -> dict[str, Any]:
        (path,) = self.root.glob(".wiggum/runs/*/run.json")
        data: dict[str, Any] = json.loads(path.read_text())
        return data


@pytest.fixture(params=runners(), ids=lambda r: r.name.replace(" ", "-"))
def project(request: pytest.FixtureRequest) -> Iterator[Project]:
    base = Path(tempfile.mkdtemp(prefix="wiggum-run-", dir="/var/tmp"))
    base.chmod(0o755)
    made = Project(base, request.param)
    (made.root / ".ralph").mkdir(parents=True)
    (made.root / ".ralph/PROMPT.md").write_text(PROMPT)
    subprocess.run(["git", "init", "-q", str(made.root)], check=True)
    yield made
    shutil.rmtree(base, ignore_errors=True)


COUNT_TO_3 = (
    "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; "
    f"echo working $n; if [ $n -ge 3 ]; then echo '{PROMISE}'; fi"
)


@needs_bwrap
def test_completion_promise_ends_the_run(project: Project) -> None:
    project.configure(COUNT_TO_3)
    done = project.wiggum("run")
    assert done.returncode == 0, done.stderr
    record = project.record()
    assert record["stopReason"] == "completed"
    assert [i["exitCode"] for i in record["iterations"]] == [0, 0, 0]
    assert [i["promiseSeen"] for i in record["iterations"]] == [False, False, True]
    assert record["backend"] == "bwrap" and record["network"] is False
    assert (project.root / "count").read_text() == "3\n"  # the work happened in the project
    log = (project.root / ".wiggum/runs" / record["runId"] / "iteration-002.log").read_text()
    assert log == "working 2\n"
    assert "working 3" in done.stdout and PROMISE in done.stdout


@needs_bwrap
def test_echoing_the_prompt_is_not_completion(project: Project) -> None:
    project.configure("cat")  # prints the prompt, which mentions the promise
    done = project.wiggum("run")
    assert done.returncode == 1
    record = project.record()
    assert record["stopReason"] == "max-iterations"
    assert len(record["iterations"]) == 4
    assert PROMISE in done.stdout  # it was printed, and rightly ignored


def test_prompt_as_argument(project: Project) -> None:
    project.root.joinpath("ralph.toml").write_text(
        '[agent]\npreset = "custom"\ncommand = ["/bin/echo", "{prompt}"]\n'
        f'[loop]\ncompletionPromise = "{PROMISE}"\nmaxIterations = 2\n'
        "[sandbox]\nenabled = false\n"
    )
    done = project.wiggum("run")
    assert "Do the work." in done.stdout
    assert project.record()["stopReason"] == "max-iterations"  # an echo, not a completion


@needs_bwrap
def test_consecutive_failures_stop_the_run(project: Project) -> None:
    project.configure("echo trying; exit 3", maxConsecutiveFailures=2)
    done = project.wiggum("run")
    assert done.returncode == 1
    record = project.record()
    assert record["stopReason"] == "max-consecutive-failures"
    assert [i["exitCode"] for i in record["iterations"]] == [3, 3]
    assert "exited with 3 (2 failure(s) in a row)" in done.stderr


@needs_bwrap
def test_a_success_resets_the_failure_count(project: Project) -> None:
    script = (
        "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ $((n % 2)) -eq 0 ]"
    )
    project.configure(script, maxConsecutiveFailures=2)
    project.wiggum("run")
    record = project.record()
    assert record["stopReason"] == "max-iterations"
    assert [i["exitCode"] for i in record["iterations"]] == [1, 0, 1, 0]


@pytest.mark.parametrize("sandbox", [pytest.param("", marks=needs_bwrap), "enabled = false"])
def test_timeout_stops_an_agent_that_ignores_term(project: Project, sandbox: str) -> None:
    marker = f"{1000 + uuid.uuid4().int % 1000}"
    project.configure(
        f"trap '' TERM; echo start; sleep {marker}; echo never",
        sandbox=sandbox,
        maxIterations=1,
        iterationTimeout=1,
    )
    began = time.monotonic()
    done = project.wiggum("run")
    assert done.returncode == 1
    (iteration,) = project.record()["iterations"]
    assert iteration["timedOut"] is True
    assert time.monotonic() - began < 20
    assert not sleeping(marker), "the agent survived its timeout"


@pytest.mark.parametrize(
    ("sandbox", "spawn"),
    [
        pytest.param("", "sleep {m} &", marks=needs_bwrap),
        pytest.param("", "setsid sleep {m} &", marks=needs_bwrap),
        ("enabled = false", "sleep {m} &"),
        ("enabled = false", "setsid sleep {m} > /dev/null 2>&1 < /dev/null &"),
    ],
)
def test_background_children_are_gone_after_the_run(
    project: Project, sandbox: str, spawn: str
) -> None:
    marker = f"{2000 + uuid.uuid4().int % 1000}"
    project.configure(spawn.format(m=marker) + f"\necho '{PROMISE}'", sandbox=sandbox)
    done = project.wiggum("run")
    assert done.returncode == 0, done.stderr
    assert wait_for(lambda: not sleeping(marker), timeout=3), "a child outlived the run"


def fake_bwrap(folder: Path) -> str:
    folder.mkdir(exist_ok=True)
    script = folder / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo bubblewrap 0.8.0; exit 0;; '
        "--help) echo --disable-userns; exit 0;; esac\n"
        "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    return f"{folder}:{os.environ['PATH']}"


def test_required_sandbox_that_cannot_start_runs_nothing(project: Project) -> None:
    project.configure("touch started; echo hi")
    done = project.wiggum("run", PATH=fake_bwrap(project.base / "bin"))
    assert done.returncode == 1
    assert "cannot start here" in done.stderr and "fix:" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project.root / "started").exists()
    assert not list(project.root.glob(".wiggum/runs/*"))


def test_not_required_runs_unsandboxed_with_a_warning(project: Project) -> None:
    project.configure(f"touch started; echo '{PROMISE}'", sandbox="required = false")
    done = project.wiggum("run", PATH=fake_bwrap(project.base / "bin"))
    assert done.returncode == 0, done.stderr
    assert "RUNNING WITHOUT A SANDBOX" in done.stderr
    assert (project.root / "started").exists()
    record = project.record()
    assert record["backend"] == "none" and "RUNNING WITHOUT A SANDBOX" in record["warnings"][0]


@needs_bwrap
def test_sandbox_failure_mid_run_aborts_and_is_not_a_failed_iteration(project: Project) -> None:
    project.configure("echo hi", maxConsecutiveFailures=5)
    # A bwrap that passes the probe but then fails to start the agent.
    folder = project.base / "bin"
    folder.mkdir()
    real = shutil.which("bwrap")
    (folder / "bwrap").write_text(
        "#!/bin/sh\n"
        f'for a in "$@"; do case "$a" in *wiggum-sandbox-probe-ok*) exec {real} "$@";; esac; '
        "done\n"
        f'case "$1" in --version|--help) exec {real} "$1";; esac\n'
        'echo "bwrap: Can\'t mount tmpfs on /newroot/tmp: No space left on device" >&2\n'
        "exit 1\n"
    )
    (folder / "bwrap").chmod(0o755)
    done = project.wiggum("run", PATH=f"{folder}:{os.environ['PATH']}")
    assert done.returncode == 1
    record = project.record()
    assert record["stopReason"] == "sandbox-failure"
    assert len(record["iterations"]) == 1
    assert "the sandbox failed to start the agent" in done.stderr


def test_missing_agent_binary_stops_before_iteration_1(project: Project) -> None:
    project.root.joinpath("ralph.toml").write_text('[agent]\npreset = "codex"\n')
    done = project.wiggum("run", PATH="/usr/bin:/bin")
    assert done.returncode == 1
    assert "'codex' was not found on PATH" in done.stderr
    assert "npm install -g @openai/codex" in done.stderr
    assert not list(project.root.glob(".wiggum/runs/*"))


def test_missing_prompt_file_is_a_clear_error(project: Project) -> None:
    project.configure("echo hi")
    (project.root / ".ralph/PROMPT.md").unlink()
    done = project.wiggum("run")
    assert done.returncode == 1 and "PROMPT.md does not exist" in done.stderr


@needs_bwrap
def test_one_run_per_project(project: Project) -> None:
    project.configure("echo hi")
    (project.root / ".wiggum").mkdir()
    with (project.root / ".wiggum/run.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        done = project.wiggum("run")
    assert done.returncode == 1
    assert "another wiggum run (pid 4242)" in done.stderr


@needs_bwrap
def test_dry_run_starts_no_agent(project: Project) -> None:
    project.configure("touch started")
    done = project.wiggum("run", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "each iteration would run:" in done.stderr and "--unshare-net" in done.stderr
    assert not (project.root / "started").exists()


@needs_bwrap
def test_checkpoint_commits_without_running_hooks(project: Project) -> None:
    hook = project.root / ".git/hooks/pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {project.root}/hook-ran\n")
    hook.chmod(0o755)
    project.configure(COUNT_TO_3, commit=True)
    done = project.wiggum("run")
    assert done.returncode == 0, done.stderr
    log = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(project.root), "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(log) == 3 and all(line.startswith("wiggum: checkpoint") for line in log)
    assert not (project.root / "hook-ran").exists()
    checkpoints = [i["checkpoint"] for i in project.record()["iterations"]]
    assert all(checkpoints) and len(set(checkpoints)) == 3


def test_interrupt_stops_everything_and_keeps_the_record(project: Project) -> None:
    marker = f"{3000 + uuid.uuid4().int % 1000}"
    sandbox = "" if HAS_BWRAP else "enabled = false"
    project.configure(f"echo started; sleep {marker}", sandbox=sandbox)
    process = project.popen("run", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: sleeping(marker)), "the agent never started"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert wait_for(lambda: not sleeping(marker), timeout=3), "the agent outlived wiggum"
    record = project.record()
    assert record["stopReason"] == "interrupted" and record["finishedAt"]
    assert len(record["iterations"]) == 1
    assert "interrupted" in err


def test_sigterm_to_wiggum_is_an_interrupt(project: Project) -> None:
    marker = f"{4000 + uuid.uuid4().int % 1000}"
    project.configure(f"sleep {marker}", sandbox="enabled = false")
    process = project.popen("run", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: sleeping(marker))
        process.terminate()
        process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130
    assert wait_for(lambda: not sleeping(marker), timeout=3)
    assert project.record()["stopReason"] == "interrupted"


@needs_bwrap
def test_run_list_and_logs(project: Project) -> None:
    project.configure(COUNT_TO_3)
    project.wiggum("run")
    run_id = project.record()["runId"]
    listing = project.wiggum("run", "--list")
    assert run_id in listing.stdout and "completed" in listing.stdout
    logs = project.wiggum("logs", run_id[:15], "--iteration", "2")
    assert logs.returncode == 0 and logs.stdout == "working 2\n"
    assert project.wiggum("logs", "--iteration", "9").returncode == 2
    assert project.wiggum("logs", "nope").returncode == 2


def test_second_ctrl_c_does_not_wait_for_the_grace_period(project: Project) -> None:
    marker = f"{5000 + uuid.uuid4().int % 1000}"
    project.configure(f"trap '' TERM INT; sleep {marker}", sandbox="enabled = false")
    process = project.popen("run", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: sleeping(marker))
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the agent ignores TERM: wiggum is now in its 5 s grace period
        began = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
        assert time.monotonic() - began < 3
    finally:
        process.kill()
    assert process.returncode == 130
    assert wait_for(lambda: not sleeping(marker), timeout=3)
    assert project.record()["stopReason"] == "interrupted"


@needs_bwrap
def test_status_line_on_a_terminal(project: Project) -> None:
    import pty
    import struct
    import termios

    project.configure(f"echo working; sleep 1.5; echo '{PROMISE}'")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    environ = project.env(TERM="xterm")
    project.runner.chown(project.base)
    process = subprocess.Popen(
        project.argv("run"), env=environ, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        screen += chunk
    process.wait(timeout=30)
    os.close(master)
    text = screen.decode(errors="replace")
    assert process.returncode == 0, text
    assert "\x1b[1;23r" in text  # rows 1-23 scroll, row 24 is the status line
    assert "wiggum · iteration 1/4 · 0:00:0" in text and "sandbox bwrap · network off" in text
    assert "working" in text and text.rstrip().count("\x1b[r") == 1  # reset at the end


@pytest.mark.parametrize("sandbox", [pytest.param("", marks=needs_bwrap), "enabled = false"])
def test_prompt_swapped_for_a_symlink_to_a_secret_is_not_read(
    project: Project, sandbox: str
) -> None:
    secret = project.home / ".ssh/id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text("s3cr3t-prompt-swap\n")
    # Iteration 1 swaps the prompt for a link to the secret; iteration 2 prints its stdin.
    script = (
        f"if [ -e swapped ]; then cat; else touch swapped; ln -sf {secret} .ralph/PROMPT.md; fi"
    )
    project.configure(script, sandbox=sandbox)
    done = project.wiggum("run")
    # Control: the link really leads to the secret, for anything that follows it on the host.
    assert (project.root / ".ralph/PROMPT.md").read_text() == "s3cr3t-prompt-swap\n"
    assert done.returncode == 1
    assert "s3cr3t" not in done.stdout
    assert project.record()["stopReason"] == "prompt-missing"
    assert "wiggum will not follow it" in done.stderr


def test_prompt_replaced_by_a_fifo_does_not_hang_wiggum(project: Project) -> None:
    project.configure("rm .ralph/PROMPT.md && mkfifo .ralph/PROMPT.md", sandbox="enabled = false")
    done = project.wiggum("run", timeout=30)
    assert done.returncode == 1 and "not a regular file" in done.stderr


FSMONITOR = "[core]\n\tfsmonitor = touch {marker}\n"
TAMPERING = {
    # Each points the host's git at a config the agent wrote, with an fsmonitor command.
    "commondir": "mkdir -p evil && cp -r .git/objects .git/refs evil/ && "
    "printf '{config}' > evil/config && echo ../evil > .git/commondir",
}


@pytest.mark.parametrize("how", TAMPERING)
def test_git_tampering_stops_the_run_before_any_checkpoint(project: Project, how: str) -> None:
    marker = project.base / "PWNED"
    config = FSMONITOR.format(marker=marker).replace("\n", "\\n").replace("\t", "\\t")
    project.configure(TAMPERING[how].format(config=config), commit=True)
    done = project.wiggum("run")
    assert done.returncode == 1 and project.record()["stopReason"] == "git-tampered", done.stderr
    assert "Inspect before running git" in done.stderr
    assert not marker.exists(), "wiggum's own git ran the planted command"
    # Control: a plain git on the host would have run it.
    subprocess.run(
        ["git", "-c", "safe.directory=*", "status"],
        cwd=project.root,
        capture_output=True,
        check=False,
    )
    assert marker.exists(), "the control arm failed, so the test proves nothing"


@needs_bwrap
def test_checkpoint_never_adds_hidden_paths(project: Project) -> None:
    (project.root / ".env").write_text("TOKEN=hidden-dotenv\n")
    (project.root / ".gitignore").write_text(".env\n")
    project.configure(
        f"printf '' > .gitignore; echo '{PROMISE}'", commit=True, sandbox='denyPaths = ["./.env"]'
    )
    done = project.wiggum("run")
    assert done.returncode == 0, done.stderr
    files = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(project.root), "ls-files"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".env" not in files.split() and ".gitignore" in files.split()
