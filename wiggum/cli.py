"""The command line: parse, build a context, call the owning package, render, return a code.

Kept thin and cheap to import: `wiggum --help` and `--version` load click and nothing else.
Each command imports what it needs when it runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiggum import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiggum.config.layers import Override
    from wiggum.config.loader import LoadedConfig


@dataclass
class AppContext:
    """What every command may need from its surroundings; tests build their own."""

    cwd: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    overrides: list[Override] = field(default_factory=list)

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
