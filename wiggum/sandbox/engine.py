"""From a loaded configuration to a proven, ready-to-use sandbox: the one entry point that
`sandbox explain`, `sandbox exec`, `run` and `doctor` share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wiggum.agents.presets import PRESETS, AgentPreset
from wiggum.config.loader import LoadedConfig
from wiggum.sandbox.host import collect_host
from wiggum.sandbox.policy import HostFacts, Policy, build_policy
from wiggum.sandbox.select import Backend, Failure, Selection, probe, select_backend


@dataclass(frozen=True)
class Prepared:
    preset: AgentPreset
    host: HostFacts
    policy: Policy
    selection: Selection


def build_for(
    loaded: LoadedConfig, environ: Mapping[str, str]
) -> tuple[AgentPreset, HostFacts, Policy]:
    """The policy for this project and configuration (reads the machine, starts nothing)."""
    preset = PRESETS[loaded.config.agent.preset]
    host = collect_host(loaded.config, preset, loaded.project_root, environ)
    return preset, host, build_policy(loaded.config, preset, host, loaded.project_root)


def prepare(
    loaded: LoadedConfig,
    environ: Mapping[str, str],
    *,
    check: Callable[[Backend], Failure | None] = probe,
) -> Prepared:
    """Select the backend and prove it starts; raises `SandboxUnavailable` when required."""
    preset, host, policy = build_for(loaded, environ)
    sandbox = loaded.config.sandbox
    selection = select_backend(
        enabled=sandbox.enabled,
        mode=sandbox.mode,
        required=sandbox.required,
        system=host.system,
        policy=policy,
        environ=environ,
        check=check,
        container=sandbox.container,
    )
    return Prepared(preset, host, policy, selection)
