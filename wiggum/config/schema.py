"""The configuration schema: frozen sections whose fields carry their own type and documentation.

Key names in files are camelCase (as in ralph-tui and the seeds); Python attributes are
snake_case. A field's metadata holds its `Kind` (how a raw value is checked and converted) and
its one-line documentation, so the validator, `config show`, the environment-variable names and
the documentation test all read the same source of truth.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class KindError(ValueError):
    """A raw value does not fit its kind; the message completes "key: ...".

    `index` names the list item at fault, so the error can point at `allowPaths[2]`.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


class Kind:
    """How one setting's raw value is checked (`convert`) and parsed from text (`from_text`)."""

    name = "value"

    def convert(self, raw: object) -> Any:
        raise NotImplementedError

    def from_text(self, text: str) -> Any:
        """Parse an environment variable or `--set` value, then convert it."""
        return self.convert(text)

    def describe(self) -> str:
        return self.name


class Str(Kind):
    name = "string"

    def __init__(self, *, nonempty: bool = False) -> None:
        self.nonempty = nonempty

    def convert(self, raw: object) -> str:
        if not isinstance(raw, str):
            raise KindError(f"expected a string, got {_type_name(raw)}")
        if self.nonempty and not raw.strip():
            raise KindError("must not be empty")
        if "\x00" in raw:
            raise KindError("must not contain a NUL character")
        return raw


class Choice(Kind):
    def __init__(self, *options: str) -> None:
        self.options = options

    def convert(self, raw: object) -> str:
        if not isinstance(raw, str):
            raise KindError(f"expected one of {self.describe()}, got {_type_name(raw)}")
        if raw not in self.options:
            raise KindError(f"{raw!r} is not one of {self.describe()}")
        return raw

    def describe(self) -> str:
        return " | ".join(self.options)


class Int(Kind):
    name = "integer"

    def __init__(self, *, minimum: int = 0) -> None:
        self.minimum = minimum

    def convert(self, raw: object) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise KindError(f"expected an integer, got {_type_name(raw)}")
        if raw < self.minimum:
            raise KindError(f"must be at least {self.minimum}, got {raw}")
        return raw

    def from_text(self, text: str) -> int:
        try:
            return self.convert(int(text.strip()))
        except ValueError as exc:
            if isinstance(exc, KindError):
                raise
            raise KindError(f"expected an integer, got {text!r}") from None

    def describe(self) -> str:
        return f"integer >= {self.minimum}"


class Bool(Kind):
    name = "boolean"

    def convert(self, raw: object) -> bool:
        if not isinstance(raw, bool):
            raise KindError(f"expected true or false, got {_type_name(raw)}")
        return raw

    def from_text(self, text: str) -> bool:
        word = text.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise KindError(f"expected true or false (or 1/0, yes/no, on/off), got {text!r}")


class OptionalBool(Bool):
    """A boolean that may be left unset so that something else (an agent preset) decides."""

    name = "boolean (unset: decided by the agent preset)"


class StrList(Kind):
    name = "list of strings"

    def convert(self, raw: object) -> tuple[str, ...]:
        if not isinstance(raw, list | tuple):
            raise KindError(f"expected a list of strings, got {_type_name(raw)}")
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                raise KindError(f"expected a string, got {_type_name(item)}", index)
            if "\x00" in item:
                raise KindError("must not contain a NUL character", index)
        return tuple(raw)

    def from_text(self, text: str) -> tuple[str, ...]:
        """A JSON array (`["a", "b,c"]`) or comma-separated items (`a,b`)."""
        stripped = text.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise KindError(f"not a valid JSON array: {exc.msg}") from None
            return self.convert(value)
        return tuple(item.strip() for item in stripped.split(",") if item.strip())


class Size(Kind):
    """A byte count: an integer, or a string such as "512M" or "8G"; 0 means no limit."""

    name = 'size ("512M", "8G"; 0 = no limit)'

    def convert(self, raw: object) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            if raw < 0:
                raise KindError(f"must not be negative, got {raw}")
            return raw
        if isinstance(raw, str):
            match = _SIZE.match(raw)
            if match:
                return int(match.group(1)) * _SIZE_FACTORS[match.group(2).upper()]
            raise KindError(f'expected a size such as "512M" or "8G", got {raw!r}')
        raise KindError(f'expected a size such as "512M" or "8G", got {_type_name(raw)}')

    def from_text(self, text: str) -> int:
        return self.convert(int(text) if text.strip().isdigit() else text)


def _type_name(raw: object) -> str:
    if raw is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    for py_type, label in names.items():
        if type(raw) is py_type:
            return f"{label} ({json.dumps(raw)})"
    if isinstance(raw, list | tuple):
        return "a list"
    if isinstance(raw, dict):
        return "a table"
    return type(raw).__name__


def setting(kind: Kind, default: Any, doc: str, *, aliases: tuple[str, ...] = ()) -> Any:
    """Declare one configuration key of a section; the default is stored converted."""
    value = default if default is None else kind.convert(default)
    return field(default=value, metadata={"kind": kind, "doc": doc, "aliases": aliases})


def section(cls: type[Any], doc: str) -> Any:
    return field(default_factory=cls, metadata={"section": cls, "doc": doc})


AGENT_PRESETS = ("claude", "codex", "opencode", "gemini", "demo", "custom")
SANDBOX_MODES = ("auto", "bwrap", "sandbox-exec", "container", "off")
DEFAULT_DENY_PATHS = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.kube", "~/.docker")


@dataclass(frozen=True)
class AgentConfig:
    preset: str = setting(Choice(*AGENT_PRESETS), "claude", "Which agent runs in the loop.")
    command: tuple[str, ...] = setting(
        StrList(),
        (),
        "Full argv that replaces the preset's command. The prompt goes to stdin unless an "
        'argument contains "{prompt}". Required when preset is "custom".',
    )
    args: tuple[str, ...] = setting(
        StrList(), (), "Extra arguments appended to the preset's command (e.g. a model flag)."
    )
    requires_network: bool | None = setting(
        OptionalBool(),
        None,
        "Whether the agent needs the network. Unset: the preset knows (cloud agents do).",
    )
    env: tuple[str, ...] = setting(
        StrList(),
        (),
        "Names of extra environment variables passed into the sandbox (values are never "
        "written to the config).",
    )


@dataclass(frozen=True)
class LoopConfig:
    prompt: str = setting(
        Str(nonempty=True), ".ralph/PROMPT.md", "Prompt file, read fresh every iteration."
    )
    max_iterations: int = setting(Int(minimum=1), 10, "Stop after this many iterations.")
    iteration_timeout: int = setting(
        Int(minimum=0), 1800, "Seconds one iteration may take before it is stopped (0: none)."
    )
    completion_promise: str = setting(
        Str(nonempty=True),
        "<promise>COMPLETE</promise>",
        "Text that, on a line of the agent's own output, ends the run successfully.",
    )
    max_consecutive_failures: int = setting(
        Int(minimum=1), 3, "Stop after this many failed iterations in a row."
    )
    commit: bool = setting(
        Bool(), False, "Make a git checkpoint commit on the host after each iteration."
    )


@dataclass(frozen=True)
class LimitsConfig:
    memory: int = setting(Size(), "8G", "Memory limit for the agent's process tree.")
    processes: int = setting(
        Int(minimum=0), 512, "Maximum number of processes in the sandbox (0: no limit)."
    )
    cpu_seconds: int = setting(Int(minimum=0), 0, "CPU time limit in seconds (0: no limit).")
    file_size: int = setting(Size(), 0, "Largest file the agent may write (0: no limit).")


@dataclass(frozen=True)
class ContainerConfig:
    engine: str = setting(
        Choice("auto", "podman", "docker"), "auto", "Container engine (auto: podman, then docker)."
    )
    image: str = setting(
        Str(nonempty=True),
        "docker.io/library/debian:bookworm-slim",
        "Image the agent runs in; it must contain the agent's runtime.",
    )
    runtime: str = setting(
        Str(), "", 'OCI runtime, e.g. "runsc" for gVisor (empty: the engine\'s default).'
    )
    rootfs: str = setting(
        Str(),
        "",
        'A root filesystem folder to run in instead of the image (e.g. "/", read-only).',
    )
    extra_flags: tuple[str, ...] = setting(
        StrList(), (), "Extra arguments passed to the engine's `run` command."
    )


@dataclass(frozen=True)
class SandboxConfig:
    enabled: bool = setting(Bool(), True, "Run every agent process inside a sandbox.")
    mode: str = setting(
        Choice(*SANDBOX_MODES),
        "auto",
        "Backend: auto picks bwrap on Linux and sandbox-exec on macOS.",
    )
    required: bool = setting(
        Bool(),
        True,
        "Refuse to run when no sandbox works. false: run unsandboxed with a warning every run.",
    )
    network: bool = setting(
        Bool(), True, "Allow network access inside the sandbox.", aliases=("allowNetwork",)
    )
    allow_paths: tuple[str, ...] = setting(
        StrList(), (), "Extra writable paths (absolute, ~, or relative to the project)."
    )
    read_only_paths: tuple[str, ...] = setting(StrList(), (), "Extra read-only paths.")
    deny_paths: tuple[str, ...] = setting(
        StrList(), DEFAULT_DENY_PATHS, "Paths hidden from the agent even if otherwise visible."
    )
    limits: LimitsConfig = section(LimitsConfig, "Resource limits for the agent's processes.")
    container: ContainerConfig = section(ContainerConfig, "Settings of the container backend.")


@dataclass(frozen=True)
class Config:
    agent: AgentConfig = section(AgentConfig, "The coding agent the loop runs.")
    loop: LoopConfig = section(LoopConfig, "How the loop runs and when it stops.")
    sandbox: SandboxConfig = section(SandboxConfig, "The OS sandbox around every agent process.")


@dataclass(frozen=True)
class SettingSpec:
    """One key of the schema, flattened: `sandbox.limits.cpuSeconds`."""

    path: tuple[str, ...]  # camelCase key names
    attrs: tuple[str, ...]  # snake_case attribute names
    kind: Kind
    default: Any
    doc: str
    aliases: tuple[str, ...]

    @property
    def key(self) -> str:
        return ".".join(self.path)

    @property
    def env_var(self) -> str:
        return "WIGGUM_" + "_".join(a.upper() for a in self.attrs)


@dataclass(frozen=True)
class SectionSpec:
    path: tuple[str, ...]
    cls: type[Any]
    doc: str

    @property
    def key(self) -> str:
        return ".".join(self.path)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def iter_settings(
    cls: type[Any] = Config, path: tuple[str, ...] = (), attrs: tuple[str, ...] = ()
) -> Iterator[SettingSpec]:
    """Every leaf key of the schema, depth first, in declaration order."""
    for f in dataclasses.fields(cls):
        if "section" in f.metadata:
            sub = f.metadata["section"]
            yield from iter_settings(sub, (*path, camel(f.name)), (*attrs, f.name))
            continue
        yield SettingSpec(
            path=(*path, camel(f.name)),
            attrs=(*attrs, f.name),
            kind=f.metadata["kind"],
            default=f.default,
            doc=f.metadata["doc"],
            aliases=f.metadata["aliases"],
        )


def iter_sections(cls: type[Any] = Config, path: tuple[str, ...] = ()) -> Iterator[SectionSpec]:
    for f in dataclasses.fields(cls):
        if "section" in f.metadata:
            sub = (*path, camel(f.name))
            yield SectionSpec(sub, f.metadata["section"], f.metadata["doc"])
            yield from iter_sections(f.metadata["section"], sub)


SETTINGS: dict[str, SettingSpec] = {spec.key: spec for spec in iter_settings()}
SECTIONS: dict[str, SectionSpec] = {spec.key: spec for spec in iter_sections()}
ALIASES: dict[str, str] = {
    ".".join((*spec.path[:-1], alias)): key
    for key, spec in SETTINGS.items()
    for alias in spec.aliases
}


def build_config(values: dict[str, Any]) -> Config:
    """Assemble a `Config` from converted values keyed by dotted key; missing keys default."""
    config: Config = _build(Config, (), values)
    return config


def _build(cls: type[Any], path: tuple[str, ...], values: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        sub = (*path, camel(f.name))
        if "section" in f.metadata:
            kwargs[f.name] = _build(f.metadata["section"], sub, values)
        else:
            kwargs[f.name] = values.get(".".join(sub), SETTINGS[".".join(sub)].default)
    return cls(**kwargs)


def config_as_dict(config: Config) -> dict[str, Any]:
    """The config as plain nested data with camelCase keys (for JSON and digests)."""
    return _as_dict(config)


def _as_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            out[camel(f.name)] = _as_dict(value)
        else:
            out[camel(f.name)] = list(value) if isinstance(value, tuple) else value
    return out
