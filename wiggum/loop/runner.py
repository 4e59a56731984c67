"""The Ralph loop: the same prompt, fed to the agent in its sandbox, until the work is done.

Only this module (through `wiggum.proc`) starts agent processes. Everything that can be
checked before the first one is checked first: the prompt, the agent binary, and a real
start of the sandbox.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import BinaryIO, TextIO

from wiggum import __version__
from wiggum.agents.presets import PRESETS, AgentPreset
from wiggum.config.loader import LoadedConfig
from wiggum.config.schema import config_as_dict
from wiggum.errors import ExitStatus, WiggumError
from wiggum.loop.checkpoint import commit_checkpoint
from wiggum.loop.gitguard import snapshot, tampered
from wiggum.loop.lock import run_lock
from wiggum.loop.records import (
    STATE_DIR,
    Iteration,
    RunRecord,
    iso,
    new_run_id,
    runs_dir,
    save,
)
from wiggum.loop.status import StatusLine
from wiggum.loop.stream import OutputPump
from wiggum.proc import (
    Launch,
    become_subreaper,
    descendants,
    finish,
    kill_processes,
    start,
    stop,
)
from wiggum.sandbox.diagnose import find_denials, strip_control
from wiggum.sandbox.engine import Prepared, prepare
from wiggum.sandbox.explain import redact_argv
from wiggum.sandbox.host import agent_argv, find_binary

CHUNK = 1 << 20
MAX_PROMPT_BYTES = 4 << 20
PIPE_SIZE = 1 << 20  # fewer, larger reads for chatty agents (Linux F_SETPIPE_SZ)
# What a sandbox prints when it could not start the agent at all (as opposed to the agent
# failing): bwrap's own errors, and sandbox-exec's (which exits 65 or 71).
SANDBOX_ERROR_PREFIXES = {"bwrap": b"bwrap: ", "sandbox-exec": b"sandbox-exec: "}


# Why a run stopped, as recorded in run.json (documented in docs/run.md).
STOP_REASONS = {
    "completed": "the agent printed the completion promise",
    "max-iterations": "reached loop.maxIterations without the completion promise",
    "max-consecutive-failures": "too many failed iterations in a row",
    "interrupted": "interrupted",
    "sandbox-failure": "the sandbox failed",
    "prompt-missing": "the prompt file disappeared or was redirected",
    "git-tampered": "the agent changed how git finds the repository's config",
}


class AgentMissing(WiggumError):
    pass


class PromptMissing(WiggumError):
    pass


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM: stop the agent, keep the record, exit 130."""


@dataclass
class Console:
    """Where the run's output goes; tests swap in their own streams."""

    out: BinaryIO  # the agent's output
    err: TextIO  # wiggum's own messages
    tty: bool = False

    def say(self, message: str) -> None:
        self.err.write(f"wiggum: {message}\n")
        self.err.flush()


@dataclass
class LoopState:
    iteration: int = 0
    started: float = field(default_factory=time.monotonic)
    failures: int = 0


def run_loop(
    loaded: LoadedConfig, environ: Mapping[str, str], console: Console, *, dry_run: bool = False
) -> int:
    config = loaded.config
    project = loaded.project_root
    preset = PRESETS[config.agent.preset]
    template = agent_argv(config, preset)
    prompt_path = project / config.loop.prompt
    read_prompt(prompt_path)  # fail now, not in iteration 1
    _check_agent(template, preset, environ)
    needs_network = (
        preset.requires_network
        if config.agent.requires_network is None
        else (config.agent.requires_network)
    )
    state_dir = project / STATE_DIR
    if not dry_run:  # before the policy is built, so the sandbox binds it (read-only)
        state_dir.mkdir(exist_ok=True)
    prepared = prepare(loaded, environ)  # raises before any agent process if it cannot start
    warnings = list(prepared.selection.warnings)
    if needs_network and not prepared.policy.network and prepared.selection.sandboxed:
        warnings.append(
            f"the {preset.name} agent needs the network, but sandbox.network is "
            "off: its API calls will fail"
        )
    for warning in warnings:
        console.say(f"warning: {warning}")
    if dry_run:
        return _dry_run(prepared, template, prompt_path, console)
    with run_lock(state_dir):
        record = _new_record(loaded, prepared, template, warnings)
        folder = runs_dir(project) / record.run_id
        save(record, folder)
        return _Run(loaded, prepared, template, prompt_path, record, folder, console).run()


def read_prompt(path: Path, expected: Path | None = None) -> str:
    """The prompt text. `expected` is where the file resolved to before the agent first ran:
    if the agent has since replaced the file with a symlink (to ~/.ssh/id_ed25519, say),
    wiggum, which reads it outside the sandbox, must not read the secret and hand it over."""
    if expected is not None and Path(os.path.realpath(path)) != expected:
        raise PromptMissing(
            f"the prompt file {path} now points to {os.path.realpath(path)} (it was "
            f"{expected} when the run started); wiggum will not follow it"
        )
    if path.exists() and not path.is_file():  # a FIFO would block wiggum for ever
        raise PromptMissing(f"the prompt file {path} is not a regular file")
    if path.is_file() and path.stat().st_size > MAX_PROMPT_BYTES:
        raise PromptMissing(f"the prompt file {path} is over {MAX_PROMPT_BYTES:,} bytes")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptMissing(
            f"the prompt file {path} does not exist; write one (or run `wiggum init`), "
            "or point loop.prompt at it"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptMissing(f"the prompt file {path} cannot be read: {exc}") from None


def _check_agent(template: Sequence[str], preset: AgentPreset, environ: Mapping[str, str]) -> None:
    if not template:
        raise AgentMissing('agent.preset = "custom" needs agent.command')
    if find_binary(template[0], environ) is None:
        hint = f" Install it: {preset.install_hint}." if preset.install_hint else ""
        raise AgentMissing(
            f"the agent command {template[0]!r} was not found on PATH.{hint} "
            "(Or choose another agent: agent.preset, or --agent.)"
        )


def substitute(template: Sequence[str], prompt: str) -> tuple[list[str], bool]:
    """The agent argv with `{prompt}` filled in, and whether the prompt goes to stdin."""
    if any("{prompt}" in arg for arg in template):
        return [arg.replace("{prompt}", prompt) for arg in template], False
    return list(template), True


def config_digest(loaded: LoadedConfig) -> str:
    text = json.dumps(config_as_dict(loaded.config), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _new_record(
    loaded: LoadedConfig, prepared: Prepared, template: Sequence[str], warnings: list[str]
) -> RunRecord:
    backend = prepared.selection.backend
    shown = ["PROMPT" if "{prompt}" in a else a for a in template]
    return RunRecord(
        run_id=new_run_id(),
        project=str(loaded.project_root),
        wiggum_version=__version__,
        config_digest=config_digest(loaded),
        backend=backend.name,
        backend_detail=backend.detail,
        network=prepared.policy.network if prepared.selection.sandboxed else True,
        argv=redact_argv(backend.launch(shown).argv),
        started_at=iso(time.time()),
        warnings=warnings,
    )


def _dry_run(prepared: Prepared, template: Sequence[str], prompt: Path, console: Console) -> int:
    import shlex

    backend = prepared.selection.backend
    argv = redact_argv(backend.launch(substitute(template, "PROMPT")[0]).argv)
    console.say(
        f"dry run: the sandbox ({backend.name}) started and was checked; no agent was started"
    )
    console.say(f"prompt file: {prompt}")
    console.say(f"each iteration would run: {shlex.join(argv)}")
    return int(ExitStatus.OK)


@dataclass
class _Run:
    """One run of the loop: what every iteration shares."""

    loaded: LoadedConfig
    prepared: Prepared
    template: Sequence[str]
    prompt_path: Path
    record: RunRecord
    folder: Path
    console: Console
    state: LoopState = field(default_factory=LoopState)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # Both taken before any agent ran.
        self.prompt_real = Path(os.path.realpath(self.prompt_path))
        self.git_before = snapshot(self.loaded.project_root)

    def run(self) -> int:
        loop = self.loaded.config.loop
        status = (
            StatusLine(self.console.err, self.status_text, self.lock)
            if (self.console.tty)
            else None
        )
        previous = signal.signal(signal.SIGTERM, _interrupt)
        become_subreaper()
        if status:
            status.start()
        reason = "max-iterations"
        try:
            for number in range(1, loop.max_iterations + 1):
                self.state.iteration = number
                stop_reason = self.iteration()
                if stop_reason:
                    reason = stop_reason
                    break
        except Interrupted:
            reason = "interrupted"
        finally:
            signal.signal(signal.SIGTERM, previous)
            if status:
                status.stop()
            self.record.stop_reason = reason
            self.record.finished_at = iso(time.time())
            save(self.record, self.folder)
            _summary(self.record, self.folder, self.state, self.console)
        return {"completed": 0, "interrupted": 130}.get(reason, int(ExitStatus.FAILED))

    def status_text(self) -> str:
        elapsed = int(time.monotonic() - self.state.started)
        clock = f"{elapsed // 3600:d}:{elapsed % 3600 // 60:02d}:{elapsed % 60:02d}"
        backend = self.prepared.selection.backend.name
        network = "on" if (self.prepared.policy.network or backend == "none") else "off"
        maximum = self.loaded.config.loop.max_iterations
        return (
            f" wiggum · iteration {self.state.iteration}/{maximum} · {clock} · "
            f"sandbox {backend} · network {network} · "
            f"failures in a row {self.state.failures}"
        )

    def iteration(self) -> str | None:
        """Run one iteration; the stop reason if the loop must stop, else None."""
        loop, state, console = self.loaded.config.loop, self.state, self.console
        try:
            prompt = read_prompt(self.prompt_path, self.prompt_real)
        except PromptMissing as exc:
            console.say(f"error: {exc}")
            return "prompt-missing"
        argv, use_stdin = substitute(self.template, prompt)
        launch = self.prepared.selection.backend.launch(argv)
        log_name = f"iteration-{state.iteration:03d}.log"
        entry = Iteration(state.iteration, iso(time.time()), log=log_name)
        self.record.iterations.append(entry)
        with self.lock:
            console.say(
                f"iteration {state.iteration}/{loop.max_iterations} "
                f"({launch.backend}; log {self.folder / log_name})"
            )
        began = time.monotonic()
        with (self.folder / log_name).open("wb") as log:
            pump = OutputPump(log, console.out, loop.completion_promise, prompt)
            outcome = run_agent(
                launch, prompt if use_stdin else None, pump, loop.iteration_timeout, self.lock
            )
        entry.duration_seconds = round(time.monotonic() - began, 3)
        entry.exit_code, entry.timed_out = outcome.exit_code, outcome.timed_out
        entry.promise_seen = pump.promise_seen
        if outcome.exit_code:
            entry.denials = find_denials(pump.tail.decode(errors="replace"))
        if outcome.interrupted:
            save(self.record, self.folder)
            raise Interrupted
        if _sandbox_failed(launch.backend, outcome.exit_code, pump.tail):
            console.say(
                "error: the sandbox failed to start the agent; the run stops here:\n  "
                + strip_control(pump.tail.decode(errors="replace")).strip()[-500:]
            )
            return "sandbox-failure"
        changed = tampered(self.git_before, snapshot(self.loaded.project_root))
        if changed:
            console.say(
                "error: the agent changed how git finds this repository's config; git "
                "on the host could now run code it planted. The run stops here, with no "
                "checkpoint. Inspect before running git in this project: " + "; ".join(changed)
            )
            save(self.record, self.folder)
            return "git-tampered"
        if loop.commit:
            entry.checkpoint = commit_checkpoint(
                self.loaded.project_root,
                f"wiggum: checkpoint after iteration {state.iteration} of run {self.record.run_id}",
                [e.path for e in self.prepared.policy.hidden],
            )
        save(self.record, self.folder)
        for line in entry.denials:
            console.say(f"the sandbox may have refused something: {line}")
        return self.decide(pump.promise_seen, outcome)

    def decide(self, promise_seen: bool, outcome: Outcome) -> str | None:
        if promise_seen:
            return "completed"
        if not outcome.timed_out and outcome.exit_code == 0:
            self.state.failures = 0
            return None
        self.state.failures += 1
        why = "timed out" if outcome.timed_out else f"exited with {outcome.exit_code}"
        self.console.say(
            f"iteration {self.state.iteration} {why} ({self.state.failures} failure(s) in a row)"
        )
        if self.state.failures >= self.loaded.config.loop.max_consecutive_failures:
            return "max-consecutive-failures"
        return None


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Interrupted


def _sandbox_failed(backend: str, exit_code: int | None, output: bytes) -> bool:
    prefix = SANDBOX_ERROR_PREFIXES.get(backend)
    if prefix is None or exit_code == 0:
        return False
    first = output.lstrip().split(b"\n", 1)[0]
    return first.startswith(prefix) and b"deprecated" not in first


@dataclass
class Outcome:
    exit_code: int | None
    timed_out: bool = False
    interrupted: bool = False


def run_agent(
    launch: Launch, stdin_text: str | None, pump: OutputPump, timeout: int, lock: threading.Lock
) -> Outcome:
    """Start the agent, stream its output, enforce the timeout, and leave nothing running."""
    before = set(descendants(os.getpid()))
    process = start(
        launch,
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if stdin_text is not None:
        threading.Thread(target=_feed, args=(process, stdin_text), daemon=True).start()
    deadline = time.monotonic() + timeout if timeout else None
    outcome = Outcome(None)
    try:
        outcome.timed_out = not _pump(process, pump, deadline, lock)
    except (KeyboardInterrupt, Interrupted):
        outcome.interrupted = True
    finally:
        try:
            if outcome.timed_out or outcome.interrupted or process.poll() is None:
                outcome.exit_code = stop(process)
            else:
                outcome.exit_code = process.wait()
        except (KeyboardInterrupt, Interrupted):  # a second Ctrl-C: no more grace
            outcome.interrupted = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            outcome.exit_code = process.wait()
        _drain(process, pump)
        pump.finish()
        _leave_nothing_running(before)
        finish(launch)
        if process.stdout:
            process.stdout.close()
    if outcome.exit_code is not None and outcome.exit_code < 0:
        outcome.exit_code = 128 - outcome.exit_code
    return outcome


def _feed(process: subprocess.Popen[bytes], text: str) -> None:
    stream = process.stdin
    if stream is None:
        return
    with contextlib.suppress(OSError):  # an agent that does not read its stdin is fine
        stream.write(text.encode())
    with contextlib.suppress(OSError):
        stream.close()


def _pump(
    process: subprocess.Popen[bytes], pump: OutputPump, deadline: float | None, lock: threading.Lock
) -> bool:
    """Copy output until the agent closes it; False if the deadline passed first."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    with contextlib.suppress(OSError, AttributeError):  # Linux only; a hint, not a need
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return False
            if not selector.select(timeout=wait):
                continue
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return True
            with lock:
                pump.feed(chunk)
                if pump.terminal is not None:
                    pump.terminal.flush()


def _drain(process: subprocess.Popen[bytes], pump: OutputPump) -> None:
    """Read what is left after the agent stopped (never blocks: its writers are gone)."""
    if process.stdout is None or process.stdout.closed:
        return
    os.set_blocking(process.stdout.fileno(), False)
    try:
        while chunk := os.read(process.stdout.fileno(), CHUNK):
            pump.feed(chunk)
    except (BlockingIOError, OSError):
        pass


def _leave_nothing_running(before: set[int]) -> None:
    """Stop whatever the agent left behind, even children that left its process group."""
    kill_processes([pid for pid in descendants(os.getpid()) if pid not in before])


def _summary(record: RunRecord, folder: Path, state: LoopState, console: Console) -> None:
    elapsed = time.monotonic() - state.started
    console.say(
        f"run {record.run_id}: {len(record.iterations)} iteration(s) in "
        f"{elapsed:.1f} s; stopped: {STOP_REASONS.get(record.stop_reason or '', '?')}"
    )
    console.say(f"record and logs: {folder}  (`wiggum logs {record.run_id}`)")
