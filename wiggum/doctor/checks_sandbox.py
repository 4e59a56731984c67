"""Checks of the sandbox backends, each started for real with the flags `run` would use.

The probe and the diagnosis are the sandbox engine's own (`select.probe`,
`diagnose.diagnose_bwrap`); doctor only decides what to show.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from wiggum.agents.presets import PRESETS
from wiggum.config.schema import Config
from wiggum.doctor.model import DoctorContext, Result, Status
from wiggum.sandbox.bwrap import detect_bwrap
from wiggum.sandbox.diagnose import diagnose_bwrap, read_userns_facts
from wiggum.sandbox.host import collect_host
from wiggum.sandbox.policy import Policy, build_policy
from wiggum.sandbox.seatbelt import SANDBOX_EXEC
from wiggum.sandbox.select import BWRAP_INSTALL, Backend, Failure, make_backend, probe


def policy_for(ctx: DoctorContext) -> Policy:
    """The policy `run` would use; with no valid config, the default one for a scratch
    folder (so the probe still runs the real flags, and touches nothing of the user's)."""
    if isinstance(ctx.built, tuple):
        return ctx.built[2]  # type: ignore[no-any-return]
    with ctx._lock:
        if "scratch-policy" not in ctx.memo:
            scratch = Path(tempfile.mkdtemp(prefix="wiggum-doctor-"))
            ctx.cleanup.append(scratch)
            preset = PRESETS["claude"]
            host = collect_host(Config(), preset, scratch, ctx.environ)
            ctx.memo["scratch-policy"] = build_policy(Config(), preset, host, scratch)
        return ctx.memo["scratch-policy"]  # type: ignore[no-any-return]


def probed(ctx: DoctorContext, backend: Backend) -> Failure | None:
    """The real probe, run once per backend however many checks ask."""
    key = f"probe:{backend.name}"
    with ctx._lock:
        if key not in ctx.memo:
            # A container's first start can take long (gVisor, image layers): allow for it.
            slow = backend.name == "container"
            ctx.memo[key] = probe(
                backend, max(ctx.probe_timeout, 30.0) if slow else ctx.probe_timeout
            )
        return ctx.memo[key]  # type: ignore[no-any-return]


def check_bwrap_installed(ctx: DoctorContext) -> Result:
    if ctx.system != "linux":
        return Result("bwrap.installed", Status.SKIP, "not Linux")
    info = detect_bwrap(ctx.environ)
    if info is None:
        return Result(
            "bwrap.installed",
            Status.FAIL,
            "bubblewrap is not installed",
            fix=BWRAP_INSTALL[0].upper() + BWRAP_INSTALL[1:] + ".",
        )
    notes = []
    if not info.disable_userns:
        notes.append(
            "no --disable-userns (bubblewrap < 0.8): nested user namespaces stay "
            "possible inside the sandbox"
        )
    if info.setuid:
        notes.append("bwrap is setuid root")
    status = Status.WARN if notes else Status.OK
    return Result(
        "bwrap.installed",
        status,
        f"bubblewrap {info.version_text} at {info.path}",
        "; ".join(notes),
        "Upgrade bubblewrap to 0.8 or newer." if notes else "",
    )


def check_bwrap_probe(ctx: DoctorContext) -> Result:
    if ctx.system != "linux":
        return Result("bwrap.probe", Status.SKIP, "not Linux")
    info = detect_bwrap(ctx.environ)
    if info is None:
        return Result("bwrap.probe", Status.SKIP, "bubblewrap is not installed")
    backend = make_backend("bwrap", policy_for(ctx), ctx.environ)
    if isinstance(backend, Failure):
        return Result("bwrap.probe", Status.FAIL, backend.summary, fix=backend.fix)
    failure = probed(ctx, backend)
    if failure is None:
        return Result("bwrap.probe", Status.OK, "a sandbox started with run's flags and answered")
    if not failure.detail:  # it hung, or could not be executed: nothing to diagnose from
        return Result("bwrap.probe", Status.FAIL, f"bwrap {failure.summary}", fix=failure.fix)
    facts = read_userns_facts(ctx.read)
    diagnosis = diagnose_bwrap(failure.detail, facts, setuid=info.setuid)
    known = ", ".join(f"{name}={value}" for name, value in facts.sysctls.items())
    detail = f"bwrap said: {failure.detail or failure.summary}"
    if known:
        detail += f"\nkernel: {known}"
    if facts.container:
        detail += f"\ncontainer: {facts.container}"
    return Result(
        "bwrap.probe",
        Status.FAIL,
        f"bwrap cannot start here: {diagnosis.cause}",
        detail,
        diagnosis.fix,
    )


def check_sandbox_exec(ctx: DoctorContext) -> Result:
    if ctx.system != "darwin":
        return Result("sandbox-exec.probe", Status.SKIP, "not macOS")
    if not Path(SANDBOX_EXEC).exists():
        return Result(
            "sandbox-exec.probe",
            Status.FAIL,
            f"{SANDBOX_EXEC} is missing",
            fix="It ships with macOS; check that /usr/bin is intact.",
        )
    backend = make_backend("sandbox-exec", policy_for(ctx), ctx.environ)
    if isinstance(backend, Failure):
        return Result("sandbox-exec.probe", Status.FAIL, backend.summary, fix=backend.fix)
    failure = probed(ctx, backend)
    if failure is None:
        return Result(
            "sandbox-exec.probe",
            Status.OK,
            "the generated profile compiles and a sandboxed command ran",
        )
    return Result(
        "sandbox-exec.probe",
        Status.FAIL,
        "the generated profile did not run",
        failure.detail,
        "Report it with `wiggum sandbox explain` output attached.",
    )
