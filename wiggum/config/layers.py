"""Layers of settings: one per file, the environment, and the command line.

A layer maps dotted keys (`sandbox.limits.memory`) to converted values, each with the
`Source` it came from. Turning raw input into a layer is where keys and types are checked;
every problem is collected so the user sees them all at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wiggum.config.document import Document, KeyPath, format_key
from wiggum.config.schema import ALIASES, SECTIONS, SETTINGS, KindError, SettingSpec
from wiggum.errors import ConfigError, Problem, UsageError

# Variables that configure wiggum itself rather than a setting.
RESERVED_ENV = frozenset({"WIGGUM_CONFIG"})


@dataclass(frozen=True)
class Source:
    """Where one effective value came from."""

    kind: str  # "default" | "user" | "project" | "env" | "flag"
    label: str = ""  # the file, variable or flag
    line: int | None = None
    item_lines: tuple[int | None, ...] = ()

    def describe(self) -> str:
        if self.kind == "default":
            return "default"
        where = f"{self.label}:{self.line}" if self.line is not None else self.label
        return f"{self.kind} ({where})"

    def location(self, index: int | None = None) -> tuple[str, int | None]:
        """(file or label, line) for an error about this value or one of its items."""
        if index is not None and index < len(self.item_lines):
            return self.label, self.item_lines[index] or self.line
        return self.label, self.line


@dataclass(frozen=True)
class Sourced:
    value: Any
    source: Source


Layer = dict[str, Sourced]


def _children(prefix: tuple[str, ...]) -> dict[str, str]:
    """Names allowed directly under a section, each mapped to its canonical dotted key."""
    names: dict[str, str] = {}
    for key, spec in SETTINGS.items():
        if spec.path[:-1] == prefix:
            names[spec.path[-1]] = key
            names.update({alias: key for alias in spec.aliases})
    for key, section in SECTIONS.items():
        if section.path[:-1] == prefix:
            names[section.path[-1]] = key
    return names


def suggest(name: str, candidates: Iterable[str]) -> str:
    """' Did you mean `x`?' for the nearest candidate, ignoring case, `_` and `-`."""

    def norm(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    by_norm = {norm(c): c for c in candidates}
    match = difflib.get_close_matches(norm(name), by_norm, n=1, cutoff=0.6)
    return f" Did you mean `{by_norm[match[0]]}`?" if match else ""


def document_layer(doc: Document, kind: str) -> Layer:
    """Check every key of a parsed file against the schema and convert its values."""
    layer: Layer = {}
    problems: list[Problem] = []
    _walk(doc, kind, doc.data, (), layer, problems)
    if problems:
        raise ConfigError(problems, "The keys and their types are in docs/configuration.md.")
    return layer


def _walk(
    doc: Document,
    kind: str,
    table: Mapping[str, Any],
    prefix: tuple[str, ...],
    layer: Layer,
    problems: list[Problem],
) -> None:
    names = _children(prefix)
    for name, raw in table.items():
        path: KeyPath = (*prefix, name)
        canonical = names.get(name)
        if canonical is None:
            where = f"[{'.'.join(prefix)}]" if prefix else "the top level"
            message = f"unknown key in {where}.{suggest(name, names)}"
            problems.append(Problem(format_key(path), message, doc.file, doc.line_of(path)))
        elif canonical in SECTIONS:
            if isinstance(raw, dict):
                _walk(doc, kind, raw, SECTIONS[canonical].path, layer, problems)
            else:
                message = f"expected a table of settings ([{canonical}]), got a single value"
                problems.append(Problem(format_key(path), message, doc.file, doc.line_of(path)))
        elif canonical in layer:
            first = layer[canonical].source.line
            message = f"set twice (also as `{canonical}` on line {first}); keep one"
            problems.append(Problem(format_key(path), message, doc.file, doc.line_of(path)))
        else:
            spec = SETTINGS[canonical]
            try:
                value = spec.kind.convert(raw)
            except KindError as exc:
                at = path if exc.index is None else (*path, exc.index)
                problems.append(Problem(format_key(at), exc.message, doc.file, doc.line_of(at)))
                continue
            layer[canonical] = Sourced(value, _file_source(doc, kind, path, value))


def _file_source(doc: Document, kind: str, path: KeyPath, value: object) -> Source:
    items: tuple[int | None, ...] = ()
    if isinstance(value, tuple):
        items = tuple(doc.lines.get((*path, index)) for index in range(len(value)))
    return Source(kind, str(doc.file), doc.line_of(path), items)


def _env_names() -> dict[str, SettingSpec]:
    names: dict[str, SettingSpec] = {}
    for spec in SETTINGS.values():
        names[spec.env_var] = spec
        for alias in spec.aliases:
            names["WIGGUM_" + "_".join((*spec.attrs[:-1], _snake(alias))).upper()] = spec
    return names


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def env_layer(environ: Mapping[str, str]) -> Layer:
    """Settings from `WIGGUM_*` variables; an unknown `WIGGUM_` name is an error (a typo)."""
    names = _env_names()
    layer: Layer = {}
    problems: list[Problem] = []
    for var in sorted(environ):
        if not var.startswith("WIGGUM_") or var in RESERVED_ENV:
            continue
        spec = names.get(var)
        if spec is None:
            message = f"unknown wiggum variable.{suggest(var, [*names, *RESERVED_ENV])}"
            problems.append(Problem(var, message, None))
            continue
        try:
            layer[spec.key] = Sourced(spec.kind.from_text(environ[var]), Source("env", var))
        except KindError as exc:
            problems.append(Problem(var, f"{spec.key}: {exc.message}", None))
    if problems:
        raise ConfigError(problems, "Variable names are listed in docs/configuration.md.")
    return layer


@dataclass(frozen=True)
class Override:
    """A setting given on the command line, already converted."""

    key: str
    value: Any
    label: str


def parse_override(text: str) -> Override:
    """Parse `--set KEY=VALUE` (value written as in an environment variable)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep:
        raise UsageError(f"--set {text!r}: expected KEY=VALUE, e.g. --set loop.maxIterations=3")
    spec = SETTINGS.get(ALIASES.get(key, key))
    if spec is None:
        raise UsageError(f"--set {key}: unknown key.{suggest(key, SETTINGS)}")
    try:
        value = spec.kind.from_text(raw)
    except KindError as exc:
        raise UsageError(f"--set {key}: {exc.message}") from None
    return Override(spec.key, value, f"--set {text}")


def flag_layer(overrides: Iterable[Override]) -> Layer:
    return {o.key: Sourced(o.value, Source("flag", o.label)) for o in overrides}
