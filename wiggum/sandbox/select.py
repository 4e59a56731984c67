"""Choosing a backend and proving it works here, before any agent process starts.

"bwrap is on PATH" is never taken as "bwrap works": availability is decided by starting the
real sandbox with the real flags and reading a marker back. An explicit request that cannot
be met stops here with the reason and the fix, unless the user opted into running
unsandboxed (`sandbox.required = false`), which then comes with a warning.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wiggum.config.schema import ContainerConfig
from wiggum.errors import WiggumError
from wiggum.proc import Launch, capped, finish, prlimit_argv, start, stop
from wiggum.sandbox.bwrap import BwrapInfo, build_bwrap_argv, detect_bwrap
from wiggum.sandbox.container import build_container_argv, cleanup_argv, detect_engine
from wiggum.sandbox.diagnose import diagnose_bwrap, read_userns_facts, strip_control
from wiggum.sandbox.policy import Limits, Policy
from wiggum.sandbox.seatbelt import SANDBOX_EXEC, build_sandbox_exec_argv, render_profile

PROBE_MARKER = "wiggum-sandbox-probe-ok"
PROBE_COMMAND = ("/bin/sh", "-c", f"echo {PROBE_MARKER}")
PROBE_TIMEOUT = 10.0
CONTAINER_PROBE_TIMEOUT = 60.0  # a first container start may unpack or cache things


@dataclass(frozen=True)
class Failure:
    """Why a backend cannot be used: `missing`, `cannot-start` or `unsupported`."""

    backend: str
    kind: str
    summary: str
    fix: str
    detail: str = ""

    def message(self) -> str:
        lines = [f"the {self.backend} sandbox {self.summary}"]
        if self.detail:
            lines.append(f"  detail: {self.detail}")
        lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class SandboxUnavailable(WiggumError):
    """A sandbox was required and none can start; raised before any agent process."""

    def __init__(self, failure: Failure) -> None:
        self.failure = failure
        super().__init__(
            failure.message()
            + "\n  (to run without a sandbox anyway, set sandbox.required = false: not advised)"
        )


@dataclass(frozen=True)
class Backend:
    """A ready-to-use backend: turns a command into a `Launch` under the policy."""

    name: str
    wrap: Callable[[Sequence[str]], tuple[str, ...]]
    policy: Policy | None
    detail: str = ""  # e.g. "bubblewrap 0.8.0"
    mount_points: tuple[Path, ...] = ()
    profile: str = ""  # the Seatbelt profile text, for `explain`
    limits_in_argv: bool = False  # `wrap` already applies the limits (prlimit, engine flags)
    cleanup: Callable[[Sequence[str]], tuple[str, ...]] | None = None  # argv -> clean-up argv
    env: Mapping[str, str] | None = None  # the agent's environment, when `wrap` cannot set it

    def launch(self, command: Sequence[str]) -> Launch:
        cwd = self.policy.cwd if self.policy else Path.cwd()
        limits = self.policy.limits if self.policy and not self.limits_in_argv else Limits()
        argv = self.wrap(command)
        after = self.cleanup(argv) if self.cleanup else ()
        return Launch(argv, cwd, limits, self.env, self.mount_points, self.name, after)


@dataclass(frozen=True)
class Selection:
    backend: Backend
    warnings: tuple[str, ...] = field(default=())

    @property
    def sandboxed(self) -> bool:
        return self.backend.name != "none"


def resolve_mode(mode: str, system: str) -> str:
    """What `auto` means on this platform ("none" when nothing fits)."""
    if mode != "auto":
        return mode
    return {"linux": "bwrap", "darwin": "sandbox-exec"}.get(system, "none")


def unsandboxed(policy: Policy | None) -> Backend:
    return Backend("none", tuple, policy)


def make_backend(
    mode: str,
    policy: Policy,
    environ: Mapping[str, str],
    container: ContainerConfig | None = None,
) -> Backend | Failure:
    """Build the backend for `mode` without starting anything."""
    if mode == "bwrap":
        info = detect_bwrap(environ)
        if info is None:
            return Failure("bwrap", "missing", "is not installed", BWRAP_INSTALL)
        return _bwrap_backend(policy, info, shutil.which("prlimit", path=environ.get("PATH")))
    if mode == "sandbox-exec":
        if not Path(SANDBOX_EXEC).exists():
            return Failure(
                "sandbox-exec",
                "missing",
                f"is not available ({SANDBOX_EXEC} not found; it exists only on macOS)",
                'Use sandbox.mode = "auto" (bwrap on Linux).',
            )
        return seatbelt_backend(policy)
    if mode == "container":
        return _container_backend(policy, container or ContainerConfig(), environ)
    return Failure(
        mode,
        "unsupported",
        "has no backend on this platform",
        "Linux and macOS are supported; on Windows use WSL2 with bubblewrap.",
    )


BWRAP_INSTALL = (
    "install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
    "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)"
)


def _bwrap_backend(policy: Policy, info: BwrapInfo, prlimit: str | None) -> Backend:
    # util-linux's prlimit is on every Linux with bwrap; without it, the spawner's
    # preexec_fn sets the same limits.
    prefix = prlimit_argv(capped(policy.limits), prlimit) if prlimit else []
    return Backend(
        "bwrap",
        lambda cmd: (*prefix, *build_bwrap_argv(policy, info, cmd)),
        policy,
        f"bubblewrap {info.version_text}",
        mount_points=policy.masked_missing(),
        limits_in_argv=prlimit is not None,
    )


def seatbelt_backend(policy: Policy) -> Backend:
    # Seatbelt, unlike bwrap (--clearenv) and containers (--env), does not touch the
    # environment: the allow-list is applied by starting sandbox-exec with it.
    profile = render_profile(policy)
    return Backend(
        "sandbox-exec",
        lambda cmd: tuple(build_sandbox_exec_argv(profile, cmd)),
        policy,
        "Seatbelt",
        profile=profile,
        env=dict(policy.env),
    )


def _container_backend(
    policy: Policy, settings: ContainerConfig, environ: Mapping[str, str]
) -> Backend | Failure:
    engine = detect_engine(settings.engine, environ)
    if engine is None:
        wanted = "podman or docker" if settings.engine == "auto" else settings.engine
        return Failure(
            "container",
            "missing",
            f"needs {wanted}, which is not installed",
            "`sudo apt-get install podman` (and `runsc` for gVisor), or set "
            "sandbox.container.engine.",
        )

    def wrap(command: Sequence[str]) -> tuple[str, ...]:
        name = f"wiggum-{os.getpid()}-{secrets.token_hex(4)}"
        return tuple(build_container_argv(policy, engine, settings, command, name=name))

    def cleanup(argv: Sequence[str]) -> tuple[str, ...]:
        return tuple(cleanup_argv(engine, argv[list(argv).index("--name") + 1]))

    runtime = f", runtime {settings.runtime}" if settings.runtime else ""
    base = f"rootfs {settings.rootfs}" if settings.rootfs else settings.image
    return Backend(
        "container",
        wrap,
        policy,
        f"{engine.name}{runtime}, {base}",
        mount_points=policy.masked_missing(),
        limits_in_argv=True,
        cleanup=cleanup,
    )


def probe(backend: Backend, timeout: float | None = None) -> Failure | None:
    """Start the real sandbox with the real flags and check that a marker comes back."""
    if timeout is None:
        timeout = CONTAINER_PROBE_TIMEOUT if backend.name == "container" else PROBE_TIMEOUT
    launch = backend.launch(PROBE_COMMAND)
    try:
        process = start(
            launch, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        return Failure(
            backend.name,
            "cannot-start",
            f"could not be run: {exc.strerror}",
            "Check that it is installed correctly.",
        )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process, grace=0.5)
        process.communicate()
        return Failure(
            backend.name,
            "cannot-start",
            f"did not start within {timeout:g} s",
            "Run `wiggum doctor` to see why.",
        )
    finally:
        finish(launch)
    done = subprocess.CompletedProcess(
        launch.argv, process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    )
    if done.returncode == 0 and PROBE_MARKER in done.stdout:
        return None
    stderr = strip_control(done.stderr).strip()
    if backend.name == "bwrap":
        diagnosis = diagnose_bwrap(stderr, read_userns_facts())
        return Failure(
            "bwrap",
            "cannot-start",
            f"cannot start here: {diagnosis.cause}",
            diagnosis.fix,
            stderr[:500],
        )
    return Failure(
        backend.name,
        "cannot-start",
        "cannot start here",
        "Run `wiggum doctor` to see why.",
        stderr[:500],
    )


def select_backend(
    *,
    enabled: bool,
    mode: str,
    required: bool,
    system: str,
    policy: Policy,
    environ: Mapping[str, str],
    check: Callable[[Backend], Failure | None] = probe,
    container: ContainerConfig | None = None,
) -> Selection:
    """The backend `run` and `sandbox exec` will use, proven to start, or an error."""
    if not enabled or mode == "off":
        why = "sandbox.enabled = false" if not enabled else 'sandbox.mode = "off"'
        return Selection(
            unsandboxed(policy),
            (f"the sandbox is off ({why}): the agent can read and change everything you can",),
        )
    resolved = resolve_mode(mode, system)
    built = make_backend(resolved, policy, environ, container)
    failure = built if isinstance(built, Failure) else check(built)
    if failure is None and isinstance(built, Backend):
        return Selection(built)
    assert failure is not None
    if required:
        raise SandboxUnavailable(failure)
    return Selection(
        unsandboxed(policy),
        (
            f"RUNNING WITHOUT A SANDBOX: {failure.message()}\n  (sandbox.required = false "
            "allowed this; the agent can read and change everything you can)",
        ),
    )
