"""The questions of `wiggum init`, asked with questionary.

Every prompt takes `io` (prompt_toolkit's `input` and `output`), so tests drive the real
wizard with key presses through a pipe.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any

from wiggum.agents.presets import PRESETS
from wiggum.scaffold.answers import Answers


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _int(text: str) -> bool | str:
    return (text.strip().isdigit() and int(text) > 0) or "a whole number above 0"


def ask(
    defaults: Answers, environ: Mapping[str, str], sandbox_note: str, io: Mapping[str, Any]
) -> Answers:
    """Ask every question, each defaulting to `defaults`; Ctrl-C raises KeyboardInterrupt."""
    import questionary
    from questionary import Choice

    path = environ.get("PATH")

    def found(name: str) -> str:
        binary = PRESETS[name].binary
        if name == "demo":
            return " (built in, offline)"
        return " (found on PATH)" if binary and shutil.which(binary, path=path) else ""

    agent = questionary.select(
        "Which agent should run in the loop?",
        choices=[Choice(f"{n}: {p.summary}{found(n)}", value=n) for n, p in PRESETS.items()],
        default=defaults.agent,
        **io,
    ).unsafe_ask()
    command = defaults.command
    if agent == "custom":
        text = questionary.text(
            "Command of the agent (words separated by spaces; {prompt} marks the prompt):",
            default=" ".join(defaults.command),
            validate=lambda t: bool(t.strip()) or "a command is needed",
            **io,
        ).unsafe_ask()
        command = tuple(text.split())
    fmt = questionary.select(
        "Config file format?",
        choices=[
            Choice("ralph.toml (TOML)", value="toml"),
            Choice("ralph.config.cjs (for Node-based teams; read without running it)", value="cjs"),
        ],
        default=defaults.format,
        **io,
    ).unsafe_ask()
    sandbox = questionary.confirm(
        f"Run every iteration inside an OS sandbox? ({sandbox_note})",
        default=defaults.sandbox,
        **io,
    ).unsafe_ask()
    mode = defaults.mode
    network = defaults.network if agent == defaults.agent else PRESETS[agent].requires_network
    if sandbox:
        mode = questionary.select(
            "Sandbox backend?",
            choices=[
                Choice("auto: bubblewrap on Linux, sandbox-exec on macOS", value="auto"),
                Choice("bwrap (Linux)", value="bwrap"),
                Choice("sandbox-exec (macOS)", value="sandbox-exec"),
            ],
            default=defaults.mode if defaults.mode in ("auto", "bwrap", "sandbox-exec") else "auto",
            **io,
        ).unsafe_ask()
        needs = " (this agent needs it for its API)" if PRESETS[agent].requires_network else ""
        network = questionary.confirm(
            f"Allow network access inside the sandbox?{needs}", default=network, **io
        ).unsafe_ask()
    allow = questionary.text(
        "Extra writable paths (comma-separated, may be empty):",
        default=", ".join(defaults.allow_paths),
        **io,
    ).unsafe_ask()
    read_only = questionary.text(
        "Extra read-only paths (comma-separated, may be empty):",
        default=", ".join(defaults.read_only_paths),
        **io,
    ).unsafe_ask()
    deny = questionary.text(
        "Paths to hide from the agent (comma-separated):",
        default=", ".join(defaults.deny_paths),
        **io,
    ).unsafe_ask()
    iterations = questionary.text(
        "Stop after how many iterations at most?",
        default=str(defaults.max_iterations),
        validate=_int,
        **io,
    ).unsafe_ask()
    return Answers(
        format=fmt,
        agent=agent,
        command=command,
        sandbox=sandbox,
        mode=mode if sandbox else "off",
        network=network,
        allow_paths=_split(allow),
        read_only_paths=_split(read_only),
        deny_paths=_split(deny),
        max_iterations=int(iterations),
        iteration_timeout=defaults.iteration_timeout,
    )


def confirm_write(summary: str, io: Mapping[str, Any]) -> bool:
    import questionary

    return bool(
        questionary.confirm(f"{summary}\nWrite these files?", default=True, **io).unsafe_ask()
    )
