"""`wiggum init`: answers (asked or given), rendered files checked, then written all at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiggum.config.cjs import parse_cjs
from wiggum.config.layers import document_layer
from wiggum.config.toml_source import parse_toml
from wiggum.errors import ExitStatus, UsageError
from wiggum.scaffold.answers import (
    Answers,
    machine_defaults,
    merge,
    recorded,
    user_defaults,
)
from wiggum.scaffold.render import Plan, apply, plan, render


@dataclass
class InitRequest:
    project: Path
    environ: Mapping[str, str]
    flags: dict[str, Any] = field(default_factory=dict)  # answers given on the command line
    yes: bool = False
    force: bool = False
    dry_run: bool = False
    interactive: bool = False  # a terminal is there to ask on
    user_config: Path | None = None
    io: Mapping[str, Any] = field(default_factory=dict)  # prompt_toolkit input/output (tests)


def defaults_for(request: InitRequest) -> Answers:
    """Built-in < machine < user config < this project's previous answers < flags."""
    answers = user_defaults(machine_defaults(request.environ), request.user_config)
    answers = merge(answers, recorded(request.project))
    return merge(answers, {k: v for k, v in request.flags.items() if v is not None})


def run_init(request: InitRequest, say: Callable[[str], None]) -> int:
    if not request.yes and not request.interactive:
        raise UsageError(
            "wiggum init asks questions and there is no terminal to ask them on; "
            "pass --yes to accept the defaults (and flags such as --agent for the "
            "rest)"
        )
    answers = defaults_for(request)
    if not request.yes:
        from wiggum.scaffold.wizard import ask

        answers = ask(answers, request.environ, sandbox_note(request.environ), request.io)
    check_answers(request.project, answers)
    files = render(answers)
    check_rendered(files)
    todo = plan(request.project, files)
    say(describe(request.project, todo, request.force))
    if request.dry_run:
        return int(ExitStatus.OK)
    if not request.yes and not request.force and not todo.changed:
        from wiggum.scaffold.wizard import confirm_write

        if not confirm_write("", request.io):
            say("nothing written")
            return int(ExitStatus.OK)
    written = apply(request.project, todo, force=request.force)
    if not (request.project / ".git").exists():
        say(
            "warning: this folder is not a git repository; `git init` and commit, so every "
            "change the agent makes can be reviewed and undone"
        )
    say(
        f"wrote {len(written)} file(s). Next: edit .ralph/PROMPT.md, check with "
        "`wiggum doctor`, then `wiggum run`."
    )
    return int(ExitStatus.OK)


def check_answers(project: Path, answers: Answers) -> None:
    if answers.agent == "custom" and not answers.command:
        raise UsageError('the "custom" agent needs a command: --command "my-agent --yes"')
    other = "ralph.config.cjs" if answers.format == "toml" else "ralph.toml"
    if (project / other).exists():
        raise UsageError(
            f"{other} already exists here; keep that format "
            f"(--format {'cjs' if other.endswith('cjs') else 'toml'}) or remove it: "
            "both files in one folder is an error"
        )


def check_rendered(files: Mapping[str, bytes]) -> None:
    """Refuse to write a config that wiggum itself would reject (a bug or a bad answer)."""
    for name, parse in (("ralph.toml", parse_toml), ("ralph.config.cjs", parse_cjs)):
        if name in files:
            document_layer(parse(files[name].decode("utf-8"), Path(name)), "project")


def describe(project: Path, todo: Plan, force: bool) -> str:
    lines = [f"in {project}:"]
    for names, word in (
        (todo.new, "create"),
        (todo.changed, "overwrite" if force else "CONFLICT (exists, differs)"),
        (todo.unchanged, "unchanged"),
    ):
        lines += [f"  {word:<28} {name}" for name in names]
    return "\n".join(lines)


def sandbox_note(environ: Mapping[str, str]) -> str:
    """The sandbox that works here, found by starting it for real (doctor's probe)."""
    from wiggum.doctor.checks_sandbox import check_bwrap_probe, check_sandbox_exec
    from wiggum.doctor.model import DoctorContext, Status

    ctx = DoctorContext(Path.cwd(), environ)
    result = check_bwrap_probe(ctx) if ctx.system == "linux" else check_sandbox_exec(ctx)
    for folder in ctx.cleanup:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    if result.status is Status.OK:
        return f"{'bubblewrap' if ctx.system == 'linux' else 'sandbox-exec'} works here"
    return f"no sandbox works here yet: {result.summary}; see `wiggum doctor`"
