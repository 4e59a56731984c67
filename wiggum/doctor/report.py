"""Running the checks and deciding the headline: would `wiggum run` start?"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from wiggum.doctor import checks_project as project
from wiggum.doctor import checks_sandbox as sandbox
from wiggum.doctor import checks_system as system
from wiggum.doctor.model import Check, DoctorContext, Result, Status
from wiggum.errors import WiggumError
from wiggum.sandbox.select import Backend, Failure, select_backend

GROUPS: dict[str, tuple[Check, ...]] = {
    "platform": (system.check_os, system.check_wsl, system.check_container, system.check_python),
    "config": (project.check_config_file, project.check_config_valid, project.check_policy),
    "agent": (
        project.check_agent_binary,
        project.check_agent_version,
        project.check_agent_auth,
        project.check_agent_network,
    ),
    "bwrap": (sandbox.check_bwrap_installed, sandbox.check_bwrap_probe),
    "sandbox-exec": (sandbox.check_sandbox_exec,),
    "container": (system.check_engines, system.check_runsc, system.check_image),
    "paths": (project.check_prompt, project.check_paths, project.check_deny),
    "git": (project.check_git,),
}
# The checks whose failure means `run` would refuse to start.
BLOCKING = {"config.file", "config.valid", "agent.binary", "paths.prompt"}


@dataclass(frozen=True)
class Report:
    headline: Result
    results: tuple[Result, ...]
    seconds: float

    @property
    def would_run(self) -> bool:
        return self.headline.status in (Status.OK, Status.WARN)


def run_doctor(ctx: DoctorContext, only: Sequence[str] = ()) -> Report:
    began = time.monotonic()
    _ = ctx.loaded, ctx.built  # computed once, before the threads share them
    checks = [c for group, cs in GROUPS.items() if not only or group in only for c in cs]
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = tuple(pool.map(lambda check: _safe(check, ctx), checks))
        headline = selection(ctx, results)
    finally:
        for folder in ctx.cleanup:
            shutil.rmtree(folder, ignore_errors=True)
    return Report(headline, results, time.monotonic() - began)


def _safe(check: Check, ctx: DoctorContext) -> Result:
    """A check that crashes is reported as failed, with the error, not as a doctor crash."""
    try:
        return check(ctx)
    except Exception as exc:  # one broken check must not hide the others
        name = check.__name__.removeprefix("check_").replace("_", "-")
        return Result(
            f"internal.{name}",
            Status.FAIL,
            f"the check itself failed: {exc!r}",
            fix="Please report this.",
        )


def selection(ctx: DoctorContext, results: Sequence[Result]) -> Result:
    """The headline: what `mode` resolves to, and whether `wiggum run` would start."""
    from wiggum.config.loader import LoadedConfig

    blocking = [r for r in results if r.id in BLOCKING and r.status is Status.FAIL]
    if not isinstance(ctx.loaded, LoadedConfig) or not isinstance(ctx.built, tuple):
        first = blocking[0] if blocking else None
        return Result(
            "selection.run",
            Status.FAIL,
            "wiggum run would NOT start: " + (first.summary if first else "no valid configuration"),
            fix=first.fix if first else "",
        )
    sandbox_cfg = ctx.loaded.config.sandbox
    try:
        chosen = select_backend(
            enabled=sandbox_cfg.enabled,
            mode=sandbox_cfg.mode,
            required=sandbox_cfg.required,
            system=ctx.system,
            policy=ctx.built[2],
            environ=ctx.environ,
            check=lambda backend: _probe(ctx, backend),
            container=sandbox_cfg.container,
        )
    except WiggumError as exc:
        return Result(
            "selection.run",
            Status.FAIL,
            f"wiggum run would NOT start: no sandbox ({sandbox_cfg.mode})",
            str(exc),
        )
    if blocking:
        return Result(
            "selection.run",
            Status.FAIL,
            "wiggum run would NOT start: " + blocking[0].summary,
            fix=blocking[0].fix,
        )
    backend = chosen.backend
    network = "on" if ctx.built[2].network else "off"
    if not chosen.sandboxed:
        return Result(
            "selection.run",
            Status.WARN,
            "wiggum run would start WITHOUT a sandbox",
            "\n".join(chosen.warnings),
            "Fix the sandbox (see above), or keep sandbox.required = true.",
        )
    return Result(
        "selection.run",
        Status.OK,
        f"wiggum run would start: mode "
        f"{sandbox_cfg.mode} -> {backend.name} ({backend.detail}), network {network}",
    )


def _probe(ctx: DoctorContext, backend: Backend) -> Failure | None:
    from wiggum.doctor.checks_sandbox import probed

    return probed(ctx, backend)
