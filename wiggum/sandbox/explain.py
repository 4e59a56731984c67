"""`wiggum sandbox explain`: the exact command line and the policy in words."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from wiggum.sandbox.policy import BASE_ENV, Entry, Policy

JSON_SCHEMA_VERSION = 1
REDACTED = "<redacted>"
# Values shown as they are; every other variable's value is hidden in explain's output,
# because --setenv puts API keys on the command line.
SHOWN_ENV = frozenset({*BASE_ENV, "HOME", "TMPDIR"})


def redact_argv(argv: Sequence[str]) -> list[str]:
    out = list(argv)
    for index, arg in enumerate(out[:-2]):
        if arg == "--setenv" and out[index + 1] not in SHOWN_ENV:
            out[index + 2] = REDACTED
    return out


def describe_policy(policy: Policy) -> dict[str, Any]:
    def paths(entries: Sequence[Entry]) -> list[str]:
        return [
            str(e.path)
            + ("  (missing: masked so it cannot be created)" if e.kind == "missing" else "")
            for e in entries
        ]

    return {
        "project": str(policy.project),
        "network": policy.network,
        "writable": paths(policy.writable),
        "readOnly": [str(e.path) for e in policy.system] + paths(policy.read_only),
        "protected": paths(policy.protected),
        "hidden": paths(policy.hidden),
        "home": f"{policy.home} is not visible, except the writable and read-only paths inside it",
        "environment": [name for name, _ in policy.env],
        "skipped": [f"{p}  (does not exist: not mounted)" for p in policy.skipped],
        "limits": {
            "memory": policy.limits.memory,
            "processes": policy.limits.processes,
            "cpuSeconds": policy.limits.cpu_seconds,
            "fileSize": policy.limits.file_size,
        },
    }


def render_text(
    backend: str, detail: str, argv: Sequence[str], policy: Policy, profile: str = ""
) -> str:
    words = describe_policy(policy)
    lines = [f"backend: {backend}" + (f" ({detail})" if detail else "")]
    lines.append(f"network: {'on' if policy.network else 'off'}")
    for title, key in (
        ("writable", "writable"),
        ("read-only", "readOnly"),
        ("protected (read-only inside writable paths)", "protected"),
        ("hidden", "hidden"),
        ("skipped", "skipped"),
    ):
        lines.append(f"{title}:")
        lines += [f"  {path}" for path in words[key]] or ["  (none)"]
    lines.append(f"home: {words['home']}")
    lines.append("environment (all else cleared): " + " ".join(words["environment"]))
    lines.append("limits: " + ", ".join(f"{k}={v or 'none'}" for k, v in words["limits"].items()))
    lines.append("")
    lines.append("command (values of secret-looking variables redacted):")
    lines.append(shlex.join(redact_argv(argv)))
    if profile:
        lines += ["", "Seatbelt profile:", profile]
    return "\n".join(lines)


def render_json(
    backend: str, detail: str, argv: Sequence[str], policy: Policy, profile: str = ""
) -> str:
    return json.dumps(
        {
            "version": JSON_SCHEMA_VERSION,
            "backend": backend,
            "detail": detail,
            "argv": redact_argv(argv),
            "profile": profile or None,
            "policy": describe_policy(policy),
        },
        indent=2,
        ensure_ascii=False,
    )
