"""The command line: parse, build a context, call the owning package, render, return a code.

Kept thin and cheap to import: `wiggum --help` and `--version` load click and nothing else.
Each command imports what it needs when it runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiggum import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiggum.config.layers import Override
    from wiggum.config.loader import LoadedConfig


class AppContext:
    """What every command may need from its surroundings; tests build their own.

    A plain class, not a dataclass: importing dataclasses is a measurable part of `--help`.
    """

    def __init__(
        self,
        cwd: Path,
        environ: Mapping[str, str] | None = None,
        overrides: list[Override] | None = None,
    ) -> None:
        self.cwd = cwd
        self.environ: Mapping[str, str] = dict(os.environ) if environ is None else environ
        self.overrides: list[Override] = overrides or []

    def load(self, *, require_project: bool = False) -> LoadedConfig:
        from wiggum.config.loader import load_config

        return load_config(self.cwd, self.environ, self.overrides, require_project=require_project)


pass_app = click.make_pass_decorator(AppContext)


def _resolve_cwd(ctx: click.Context, param: click.Parameter, value: str | None) -> Path:
    path = Path(value) if value else Path.cwd()
    if not path.is_dir():
        raise click.BadParameter(f"{value!r} is not a folder", ctx, param)
    return path.resolve()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="wiggum")
@click.option(
    "-C",
    "directory",
    metavar="DIR",
    callback=_resolve_cwd,
    help="Run as if started in DIR (the project is found from there upward).",
)
@click.option(
    "--set",
    "settings",
    metavar="KEY=VALUE",
    multiple=True,
    help="Override one setting, e.g. --set loop.maxIterations=3 (repeatable).",
)
@click.pass_context
def cli(ctx: click.Context, directory: Path, settings: tuple[str, ...]) -> None:
    """Run coding agents in a Ralph loop, each iteration inside an OS sandbox.

    \b
    Configuration: ralph.toml (or ralph.config.cjs) in the project, found upward
    from the current folder. See docs/configuration.md.
    """
    from wiggum.config.layers import parse_override

    ctx.obj = AppContext(cwd=directory, overrides=[parse_override(s) for s in settings])


@cli.group()
def config() -> None:
    """Show and check the effective configuration."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in docs).")
@pass_app
def config_show(app: AppContext, as_json: bool) -> int:
    """Print the effective configuration and where each value came from."""
    from wiggum.config.render import render_json, render_text

    loaded = app.load()
    if as_json:
        click.echo(render_json(loaded))
    else:  # click strips colour when stdout is not a terminal; NO_COLOR strips it everywhere
        click.echo(render_text(loaded), color=False if "NO_COLOR" in app.environ else None)
    return 0


@config.command("validate")
@pass_app
def config_validate(app: AppContext) -> int:
    """Check the project's configuration; exit 2 and list every problem if it is invalid."""
    loaded = app.load(require_project=True)
    set_here = sum(1 for s in loaded.sources.values() if s.kind == "project")
    click.echo(f"{loaded.project_file}: valid ({set_here} settings set, the rest default)")
    return 0


@cli.group()
def sandbox() -> None:
    """Inspect and try the sandbox that `run` uses."""


def _sandbox_overrides(app: AppContext, mode: str | None, no_network: bool) -> None:
    from wiggum.config.layers import Override

    if mode:
        app.overrides.append(Override("sandbox.mode", mode, f"--mode {mode}"))
        app.overrides.append(Override("sandbox.enabled", mode != "off", f"--mode {mode}"))
    if no_network:
        app.overrides.append(Override("sandbox.network", False, "--no-network"))


_MODE_CHOICE = click.Choice(["auto", "bwrap", "sandbox-exec", "container", "off"])


@sandbox.command("explain")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--mode", type=_MODE_CHOICE, help="Explain this backend instead of the configured.")
@click.option("--no-network", is_flag=True, help="Explain the sandbox with network off.")
@pass_app
def sandbox_explain(app: AppContext, as_json: bool, mode: str | None, no_network: bool) -> int:
    """Print the exact sandbox command `run` would use, and the policy in words.

    Nothing is started. The agent's command is shown as `AGENT...`.
    """
    from wiggum.sandbox import explain
    from wiggum.sandbox.engine import build_for
    from wiggum.sandbox.host import agent_argv
    from wiggum.sandbox.select import Failure, SandboxUnavailable, make_backend, resolve_mode

    _sandbox_overrides(app, mode, no_network)
    loaded = app.load()
    preset, host, policy = build_for(loaded, app.environ)
    sandbox_cfg = loaded.config.sandbox
    resolved = resolve_mode(sandbox_cfg.mode, host.system) if sandbox_cfg.enabled else "off"
    command = agent_argv(loaded.config, preset) or ("AGENT...",)
    if resolved in ("off", "none"):
        name, detail, argv, profile = "none", "unsandboxed", tuple(command), ""
    else:
        built = make_backend(resolved, policy, app.environ, sandbox_cfg.container)
        if isinstance(built, Failure):
            raise SandboxUnavailable(built)
        name, detail, profile = built.name, built.detail, built.profile
        argv = built.wrap(command)
    render = explain.render_json if as_json else explain.render_text
    click.echo(render(name, detail, argv, policy, profile))
    return 0


@sandbox.command(
    "exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option("--mode", type=_MODE_CHOICE, help="Use this backend instead of the configured.")
@click.option("--no-network", is_flag=True, help="Turn the network off for this command.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@pass_app
def sandbox_exec(
    app: AppContext, mode: str | None, no_network: bool, command: tuple[str, ...]
) -> int:
    """Run COMMAND in the same sandbox `run` would use; exit with its exit code.

    \b
    Example: wiggum sandbox exec -- cat ~/.ssh/id_ed25519
    """
    from wiggum.proc import run_foreground
    from wiggum.sandbox.engine import prepare

    _sandbox_overrides(app, mode, no_network)
    prepared = prepare(app.load(), app.environ)
    for warning in prepared.selection.warnings:
        click.secho(f"wiggum: warning: {warning}", fg="yellow", err=True)
    return run_foreground(prepared.selection.backend.launch(command))


_SANDBOX_DEFAULT = "(configured)"
# Kept in step with wiggum.config.schema.AGENT_PRESETS (a test checks), so that importing the
# schema is not needed for `--help`.
_PRESET_NAMES = ("claude", "codex", "opencode", "gemini", "demo", "custom")


@cli.command("run")
@click.option(
    "--sandbox",
    "sandbox_mode",
    type=click.Choice([_SANDBOX_DEFAULT, "auto", "bwrap", "sandbox-exec", "container"]),
    is_flag=False,
    flag_value=_SANDBOX_DEFAULT,
    default=None,
    metavar="[=MODE]",
    help="Require a sandbox (the configured mode, or MODE).",
)
@click.option("--no-sandbox", is_flag=True, help="Run the agent unsandboxed (with a warning).")
@click.option("--no-network", is_flag=True, help="Turn the network off inside the sandbox.")
@click.option("--max-iterations", type=click.IntRange(min=1), help="Stop after N iterations.")
@click.option("--iteration-timeout", type=click.IntRange(min=0), help="Seconds per iteration.")
@click.option("--agent", type=click.Choice(list(_PRESET_NAMES)), help="Use this agent preset.")
@click.option("--dry-run", is_flag=True, help="Check everything and show the command; run nothing.")
@click.option("--list", "list_runs", is_flag=True, help="List the recorded runs and exit.")
@pass_app
def run(
    app: AppContext,
    sandbox_mode: str | None,
    no_sandbox: bool,
    no_network: bool,
    max_iterations: int | None,
    iteration_timeout: int | None,
    agent: str | None,
    dry_run: bool,
    list_runs: bool,
) -> int:
    """Run the agent in a loop, each iteration inside the sandbox, until it is done.

    The loop stops when the agent prints the completion promise, after loop.maxIterations,
    after loop.maxConsecutiveFailures failed iterations in a row, or on Ctrl-C (the agent is
    stopped and the run record kept). Exit 0 when the agent completed, 130 when interrupted,
    1 otherwise.
    """
    from wiggum.config.layers import Override
    from wiggum.errors import UsageError

    if list_runs:
        return _list_runs(app)
    if sandbox_mode and no_sandbox:
        raise UsageError("--sandbox and --no-sandbox contradict each other; pass one")
    flags = app.overrides
    if sandbox_mode:
        flags.append(Override("sandbox.enabled", True, "--sandbox"))
        if sandbox_mode != _SANDBOX_DEFAULT:
            flags.append(Override("sandbox.mode", sandbox_mode, f"--sandbox={sandbox_mode}"))
    if no_sandbox:
        flags.append(Override("sandbox.enabled", False, "--no-sandbox"))
    _sandbox_overrides(app, None, no_network)
    if max_iterations is not None:
        flags.append(Override("loop.maxIterations", max_iterations, "--max-iterations"))
    if iteration_timeout is not None:
        flags.append(Override("loop.iterationTimeout", iteration_timeout, "--iteration-timeout"))
    if agent:
        flags.append(Override("agent.preset", agent, "--agent"))
    loaded = app.load(require_project=True)
    if sandbox_mode and loaded.config.sandbox.mode == "off":
        flags.append(Override("sandbox.mode", "auto", "--sandbox"))
        loaded = app.load(require_project=True)
    import sys

    from wiggum.loop.runner import Console, run_loop

    console = Console(
        sys.stdout.buffer,
        sys.stderr,
        tty=sys.stdout.isatty() and sys.stderr.isatty() and "NO_COLOR" not in app.environ,
    )
    return run_loop(loaded, app.environ, console, dry_run=dry_run)


def _list_runs(app: AppContext) -> int:
    from wiggum.loop.records import list_runs

    loaded = app.load(require_project=True)
    runs = list_runs(loaded.project_root)
    if not runs:
        click.echo("no runs recorded yet")
        return 0
    click.echo(f"{'run':22} {'started':20} {'iterations':>10}  {'backend':12} stopped")
    for rec in runs:
        reason = rec.get("stopReason") or "(running or crashed)"
        click.echo(
            f"{rec.get('runId', '?'):22} {rec.get('startedAt', '?'):20} "
            f"{len(rec.get('iterations', [])):>10}  {rec.get('backend', '?'):12} {reason}"
        )
    return 0


@cli.command("logs")
@click.argument("run_id", required=False, metavar="[RUN]")
@click.option("--iteration", "-i", type=click.IntRange(min=1), help="Only this iteration's log.")
@pass_app
def logs(app: AppContext, run_id: str | None, iteration: int | None) -> int:
    """Print the agent output of a run (the newest by default; a unique prefix of RUN works)."""
    import sys

    from wiggum.errors import UsageError
    from wiggum.loop.records import find_run

    loaded = app.load(require_project=True)
    folder = find_run(loaded.project_root, run_id)
    files = sorted(folder.glob("iteration-*.log"))
    if iteration is not None:
        files = [f for f in files if f.name == f"iteration-{iteration:03d}.log"]
        if not files:
            raise UsageError(f"run {folder.name} has no iteration {iteration}")
    for path in files:
        click.echo(f"==> {path} <==", err=True)
        sys.stdout.buffer.write(path.read_bytes())
        sys.stdout.buffer.flush()
    return 0


_DOCTOR_GROUPS = (
    "platform",
    "config",
    "agent",
    "bwrap",
    "sandbox-exec",
    "container",
    "paths",
    "git",
)


@cli.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report (see docs).")
@click.option(
    "--check",
    "only",
    multiple=True,
    type=click.Choice(_DOCTOR_GROUPS),
    help="Run only this group of checks (repeatable).",
)
@pass_app
def doctor(app: AppContext, as_json: bool, only: tuple[str, ...]) -> int:
    """Check, for real, whether `wiggum run` would start here, and say how to fix what is not.

    Exit 0 when run would start (warnings allowed), 1 when it would not.
    """
    import sys

    from wiggum.doctor.model import DoctorContext
    from wiggum.doctor.render import render_json, render_text
    from wiggum.doctor.report import run_doctor

    ctx = DoctorContext(app.cwd, app.environ, list(app.overrides))
    report = run_doctor(ctx, only)
    if as_json:
        click.echo(render_json(report))
    else:
        import shutil

        color = sys.stdout.isatty() and "NO_COLOR" not in app.environ
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 100
        click.echo(render_text(report, color=color, width=width), color=color)
    return 0 if report.would_run else 1


@cli.command("init")
@click.option("--yes", "-y", is_flag=True, help="Accept the defaults; ask nothing.")
@click.option("--agent", type=click.Choice(list(_PRESET_NAMES)), help="Agent preset.")
@click.option("--command", "agent_command", metavar="'CMD ARGS'", help="Command of a custom agent.")
@click.option("--format", "fmt", type=click.Choice(["toml", "cjs"]), help="Config file format.")
@click.option("--sandbox/--no-sandbox", default=None, help="Sandbox every iteration (default).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "bwrap", "sandbox-exec", "container", "off"]),
    help="Sandbox backend.",
)
@click.option("--network/--no-network", default=None, help="Network inside the sandbox.")
@click.option("--allow-path", multiple=True, help="Extra writable path (repeatable).")
@click.option("--read-only-path", multiple=True, help="Extra read-only path (repeatable).")
@click.option("--deny-path", multiple=True, help="Path to hide (repeatable; replaces defaults).")
@click.option("--max-iterations", type=click.IntRange(min=1), help="Loop limit.")
@click.option("--iteration-timeout", type=click.IntRange(min=0), help="Seconds per iteration.")
@click.option("--force", is_flag=True, help="Overwrite files that exist and differ.")
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@pass_app
def init(
    app: AppContext,
    yes: bool,
    agent: str | None,
    agent_command: str | None,
    fmt: str | None,
    sandbox: bool | None,
    mode: str | None,
    network: bool | None,
    allow_path: tuple[str, ...],
    read_only_path: tuple[str, ...],
    deny_path: tuple[str, ...],
    max_iterations: int | None,
    iteration_timeout: int | None,
    force: bool,
    dry_run: bool,
) -> int:
    """Set up a project: ralph.toml (or ralph.config.cjs), the prompt, ignore rules.

    Asks on a terminal, with defaults detected here (agents on PATH, the sandbox that works,
    your user config, the answers of a previous init). Never overwrites a file without
    --force: it lists the files that differ and writes nothing.
    """
    import shlex
    import sys

    from wiggum.config.loader import user_config_path
    from wiggum.scaffold.init import InitRequest, run_init

    flags = {
        "agent": agent,
        "format": fmt,
        "sandbox": sandbox,
        "network": network,
        "mode": mode,
        "max_iterations": max_iterations,
        "iteration_timeout": iteration_timeout,
        "command": tuple(shlex.split(agent_command)) if agent_command else None,
        "allow_paths": allow_path or None,
        "read_only_paths": read_only_path or None,
        "deny_paths": deny_path or None,
    }
    if sandbox is False and mode is None:
        flags["mode"] = "off"
    user_file, _explicit = user_config_path(app.environ)
    request = InitRequest(
        project=app.cwd,
        environ=app.environ,
        flags=flags,
        yes=yes,
        force=force,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and sys.stdout.isatty(),
        user_config=user_file,
    )
    return run_init(request, click.echo)
