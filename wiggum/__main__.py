"""Entry point and the one place where exceptions become exit codes."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiggum.errors import WiggumError


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        # Answered before click is imported: scripts call this often and it needs no parser.
        from wiggum import __version__

        sys.stdout.write(f"wiggum, version {__version__}\n")
        return 0
    import click

    from wiggum.cli import cli

    try:
        result = cli.main(args=args, prog_name="wiggum", standalone_mode=False)
    except click.ClickException as exc:  # bad flag, unknown command, bad parameter
        exc.show()
        return _status("USAGE")
    except (KeyboardInterrupt, click.Abort):
        click.echo("\nwiggum: interrupted", err=True)
        return _status("INTERRUPTED")
    except Exception as exc:
        return _failure(exc)
    return int(result) if isinstance(result, int) else 0


def _status(name: str) -> int:
    # wiggum.errors is imported only when something went wrong: `--help` stays fast.
    from wiggum.errors import ExitStatus

    return int(ExitStatus[name])


def _failure(exc: Exception) -> int:
    """Called inside the `except` block, so the traceback is still at hand."""
    import click

    from wiggum.errors import ExitStatus, WiggumError

    if isinstance(exc, WiggumError):
        _report(exc)
        return int(exc.exit_status)
    log = _write_crash_log()  # a bug: keep the traceback out of the user's face, but keep it
    click.echo(f"wiggum: unexpected internal error; the traceback is in {log}", err=True)
    click.echo("Please report it with that file attached.", err=True)
    return int(ExitStatus.UNEXPECTED)


def _report(exc: WiggumError) -> None:
    import click

    from wiggum.errors import ConfigError

    if isinstance(exc, ConfigError):
        click.echo("wiggum: configuration error:", err=True)
        for problem in exc.problems:
            click.echo(f"  {problem}", err=True)
        if exc.hint:
            click.echo(exc.hint, err=True)
        return
    click.echo(f"wiggum: error: {exc}", err=True)


def _write_crash_log() -> str:
    import tempfile
    import time
    import traceback
    from pathlib import Path

    import platformdirs

    text = traceback.format_exc()
    name = time.strftime("crash-%Y%m%d-%H%M%S.log")
    for folder in (platformdirs.user_log_path("wiggum"), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            return str(path)
        except OSError:
            continue
    sys.stderr.write(text)
    return "(could not write a log; printed above)"


if __name__ == "__main__":
    sys.exit(main())
