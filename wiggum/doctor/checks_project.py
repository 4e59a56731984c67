"""Checks of the project: its configuration, the agent, the paths, git."""

from __future__ import annotations

from pathlib import Path

from wiggum.agents.presets import PRESETS
from wiggum.config.loader import PROJECT_FILES, LoadedConfig, find_project_file
from wiggum.doctor.model import DoctorContext, Result, Status
from wiggum.errors import ConfigError, WiggumError
from wiggum.sandbox.host import agent_argv


def check_config_file(ctx: DoctorContext) -> Result:
    try:
        found = find_project_file(ctx.cwd)
    except ConfigError as exc:
        return Result("config.file", Status.FAIL, "two project files", str(exc), exc.hint)
    if found is None:
        return Result(
            "config.file",
            Status.FAIL,
            f"no {' or '.join(PROJECT_FILES)} found",
            f"looked in {ctx.cwd} and every folder above it",
            "Run `wiggum init` in the project, or `wiggum -C DIR doctor`.",
        )
    return Result("config.file", Status.OK, str(found))


def check_config_valid(ctx: DoctorContext) -> Result:
    loaded = ctx.loaded
    in_no_file = isinstance(loaded, ConfigError) and not any(p.file for p in loaded.problems)
    if in_no_file and _project_file(ctx) is None:  # e.g. "/" as the project: see config.file
        return Result("config.valid", Status.SKIP, "no project file")
    if isinstance(loaded, ConfigError):
        return Result(
            "config.valid",
            Status.FAIL,
            f"the configuration has {len(loaded.problems)} problem(s)",
            "\n".join(str(p) for p in loaded.problems),
            loaded.hint,
        )
    if isinstance(ctx.built, WiggumError):
        return Result(
            "config.valid", Status.FAIL, "the sandbox policy cannot be built", str(ctx.built)
        )
    return Result("config.valid", Status.OK, "valid")


def _project_file(ctx: DoctorContext) -> Path | None:
    try:
        return find_project_file(ctx.cwd)
    except ConfigError:
        return None


def check_policy(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.built, tuple):
        return Result("config.policy", Status.SKIP, "no valid configuration")
    _preset, _host, policy = ctx.built
    sandbox = ctx.loaded.config.sandbox
    words = [
        f"mode {sandbox.mode}" + ("" if sandbox.enabled else " (disabled)"),
        f"network {'on' if policy.network else 'off'}",
        f"{len(policy.writable)} writable",
        f"{len(policy.read_only) + len(policy.system)} read-only",
        f"{len(policy.protected)} protected",
        f"{len(policy.hidden)} hidden",
    ]
    return Result(
        "config.policy",
        Status.OK,
        ", ".join(words),
        fix="`wiggum sandbox explain` shows every path and the exact command.",
    )


def _agent(ctx: DoctorContext) -> tuple[str, list[str]] | None:
    if not isinstance(ctx.loaded, LoadedConfig):
        return None
    preset = PRESETS[ctx.loaded.config.agent.preset]
    return preset.name, list(agent_argv(ctx.loaded.config, preset))


def check_agent_binary(ctx: DoctorContext) -> Result:
    agent = _agent(ctx)
    if agent is None:
        return Result("agent.binary", Status.SKIP, "no valid configuration")
    name, argv = agent
    if not argv:
        return Result(
            "agent.binary",
            Status.FAIL,
            'preset "custom" has no agent.command',
            fix='Set agent.command, e.g. command = ["my-agent", "--yes"].',
        )
    path = ctx.which(argv[0])
    if path is None:
        hint = PRESETS[name].install_hint
        return Result(
            "agent.binary",
            Status.FAIL,
            f"{argv[0]!r} is not on PATH",
            f"the {name} agent runs `{' '.join(argv)}`",
            f"Install it: {hint}." if hint else "Check agent.command.",
        )
    return Result("agent.binary", Status.OK, f"{name}: {path}")


def check_agent_version(ctx: DoctorContext) -> Result:
    agent = _agent(ctx)
    binary = ctx.which(agent[1][0]) if agent and agent[1] else None
    if agent is None or binary is None:
        return Result("agent.version", Status.SKIP, "no agent binary")
    name, argv = agent
    if name == "demo":
        return Result("agent.version", Status.OK, "built into wiggum")
    ran = ctx.run([binary, "--version"], ctx.command_timeout)
    if ran.code is None:
        return Result(
            "agent.version",
            Status.WARN,
            f"`{argv[0]} --version` did not answer",
            ran.err,
            "Check that the agent starts at all: run it by hand.",
        )
    first = next((line for line in (ran.out + ran.err).splitlines() if line.strip()), "")
    if not ran.ok:
        return Result(
            "agent.version", Status.WARN, f"`{argv[0]} --version` exited {ran.code}", first
        )
    return Result("agent.version", Status.OK, first[:120] or "(no version printed)")


def check_agent_auth(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.built, tuple):
        return Result("agent.auth", Status.SKIP, "no valid configuration")
    preset, host, _policy = ctx.built
    if not preset.auth_paths:
        return Result("agent.auth", Status.OK, f"the {preset.name} agent needs no login files")
    present = [p for p in preset.auth_paths if host.kind(host.resolved[p]) != "missing"]
    if not present:
        return Result(
            "agent.auth",
            Status.WARN,
            "none of the agent's login files exist",
            "looked for " + ", ".join(preset.auth_paths),
            f"Log in once outside the loop ({preset.install_hint or preset.name}); "
            "or pass an API key with agent.env.",
        )
    return Result("agent.auth", Status.OK, "writable in the sandbox: " + ", ".join(present))


def check_agent_network(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.built, tuple):
        return Result("agent.network", Status.SKIP, "no valid configuration")
    preset, _host, policy = ctx.built
    config = ctx.loaded.config
    needs = (
        preset.requires_network
        if config.agent.requires_network is None
        else (config.agent.requires_network)
    )
    if needs and not policy.network and config.sandbox.enabled:
        return Result(
            "agent.network",
            Status.WARN,
            f"the {preset.name} agent needs the network, but sandbox.network is off",
            "Its API calls will fail inside the sandbox.",
            "Set sandbox.network = true, or agent.requiresNetwork = false for a local model.",
        )
    state = "on" if policy.network else "off"
    return Result(
        "agent.network",
        Status.OK,
        f"network {state}; the agent {'needs' if needs else 'does not need'} it",
    )


def check_prompt(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.loaded, LoadedConfig):
        return Result("paths.prompt", Status.SKIP, "no valid configuration")
    path = ctx.loaded.project_root / ctx.loaded.config.loop.prompt
    if not path.is_file():
        return Result(
            "paths.prompt",
            Status.FAIL,
            f"the prompt file {path} does not exist",
            fix="Write it (or run `wiggum init`), or set loop.prompt.",
        )
    promise = ctx.loaded.config.loop.completion_promise
    text = path.read_text(encoding="utf-8", errors="replace")
    if promise in {line.strip() for line in text.splitlines()}:
        return Result(
            "paths.prompt",
            Status.WARN,
            "the completion promise stands alone on a line of the prompt",
            f"{path}: when the agent prints that line, it looks like an echo of the prompt "
            "and does not end the run",
            "Mention the promise inside a sentence instead (see docs/run.md).",
        )
    return Result("paths.prompt", Status.OK, str(path))


def check_paths(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.built, tuple):
        return Result("paths.exist", Status.SKIP, "no valid configuration")
    policy = ctx.built[2]
    if policy.skipped:
        return Result(
            "paths.exist",
            Status.WARN,
            f"{len(policy.skipped)} allowed or read-only path(s) do not exist",
            "\n".join(str(p) for p in policy.skipped),
            "Create them, or remove them from sandbox.allowPaths/readOnlyPaths: "
            "a missing path is not mounted.",
        )
    return Result("paths.exist", Status.OK, "every allowed and read-only path exists")


def check_deny(ctx: DoctorContext) -> Result:
    if not isinstance(ctx.built, tuple):
        return Result("paths.deny", Status.SKIP, "no valid configuration")
    _preset, _host, policy = ctx.built
    denied = ctx.loaded.config.sandbox.deny_paths
    masked = len(policy.hidden)
    return Result(
        "paths.deny",
        Status.OK,
        f"{len(denied)} deny path(s); {masked} masked where something would expose "
        "them, the rest are invisible anyway",
        ", ".join(denied),
    )


def check_git(ctx: DoctorContext) -> Result:
    root = ctx.loaded.project_root if isinstance(ctx.loaded, LoadedConfig) else ctx.cwd
    inside = ctx.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], ctx.command_timeout)
    if not inside.ok:
        return Result(
            "git.repo",
            Status.WARN,
            "the project is not a git repository",
            str(root),
            "`git init` and commit, so every change the agent makes can "
            "be reviewed and undone (loop.commit = true makes checkpoints).",
        )
    top = Path(inside.out.strip())
    if top.resolve() != root.resolve():
        return Result(
            "git.repo",
            Status.WARN,
            f"the project is a sub-folder of {top}",
            "The repository's .git is not visible in the sandbox, so the agent cannot use git.",
            "Put ralph.toml at the repository root.",
        )
    status = ctx.run(["git", "-C", str(root), "status", "--porcelain"], ctx.command_timeout)
    changes = len(status.out.splitlines())
    if changes:
        return Result(
            "git.repo",
            Status.WARN,
            f"git repository with {changes} uncommitted change(s)",
            fix="Commit before a run, so the agent's work is easy to review and undo.",
        )
    return Result("git.repo", Status.OK, "git repository, work tree clean")
