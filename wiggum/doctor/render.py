"""Doctor's output: a report grouped by area (rich, readable without colour) or JSON."""

from __future__ import annotations

import io
import json
from typing import Any

from wiggum.doctor.model import Result, Status
from wiggum.doctor.report import Report

JSON_SCHEMA_VERSION = 1
SYMBOLS = {Status.OK: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "-"}
STYLES = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIP: "dim"}


def render_json(report: Report) -> str:
    def item(result: Result) -> dict[str, Any]:
        return {
            "id": result.id,
            "group": result.group,
            "status": result.status.value,
            "summary": result.summary,
            "detail": result.detail,
            "fix": result.fix,
        }

    return json.dumps(
        {
            "version": JSON_SCHEMA_VERSION,
            "wouldRun": report.would_run,
            "headline": item(report.headline),
            "checks": [item(r) for r in report.results],
            "seconds": round(report.seconds, 3),
        },
        indent=2,
        ensure_ascii=False,
    )


def render_text(report: Report, *, color: bool, width: int | None = None) -> str:
    from rich.console import Console
    from rich.text import Text

    console = Console(
        record=True,
        force_terminal=color,
        no_color=not color,
        width=width or 100,
        highlight=False,
        file=io.StringIO(),
    )
    group = None
    for result in report.results:
        if result.group != group:
            group = result.group
            console.print(Text(f"\n{group}", style="bold"))
        _line(console, result)
    console.print()
    _line(console, report.headline, headline=True)
    counts = {s: sum(1 for r in report.results if r.status is s) for s in Status}
    console.print(
        Text(
            f"{counts[Status.OK]} ok, {counts[Status.WARN]} warning(s), "
            f"{counts[Status.FAIL]} failed, {counts[Status.SKIP]} skipped "
            f"in {report.seconds:.2f} s",
            style="dim",
        )
    )
    text = console.export_text(styles=color).rstrip("\n")
    return "\n".join(line.rstrip() for line in text.splitlines())


def _line(console: Any, result: Result, *, headline: bool = False) -> None:
    from rich.padding import Padding
    from rich.text import Text

    symbol = SYMBOLS[result.status]
    label = result.status.value.upper() if headline else result.status.value
    line = Text(f"  {symbol} {label:<4} ", style=STYLES[result.status])
    line.append(result.summary, style="bold" if headline else "")
    line.append(f"  [{result.id}]", style="dim")
    console.print(line)
    for text in result.detail.splitlines():
        console.print(Padding(Text(text, style="dim"), (0, 0, 0, 11)))
    if result.fix and result.status in (Status.WARN, Status.FAIL):
        console.print(Padding(Text(f"fix: {result.fix}", style="cyan"), (0, 0, 0, 11)))
