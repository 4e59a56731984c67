"""A structural checker for generated Seatbelt profiles.

Linux cannot compile a profile, so every profile wiggum generates is checked here instead:
it must parse as balanced s-expressions with well-formed strings, use only operations and
filters from a known list, and mention every path of its policy. `doctor` on macOS compiles
profiles for real; this catches what can be caught without a Mac.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KNOWN_OPERATIONS = frozenset({
    "default", "file-read*", "file-read-data", "file-read-metadata", "file-write*",
    "file-write-data", "file-write-create", "file-write-unlink", "file-ioctl",
    "process-exec", "process-exec*", "process-fork", "process-info*", "signal", "sysctl-read",
    "mach-lookup", "ipc-posix-shm", "ipc-posix-shm-read*", "ipc-posix-shm-write-create",
    "ipc-posix-shm-write-data", "network*", "network-outbound", "network-inbound",
    "network-bind", "system-socket", "pseudo-tty", "user-preference-read", "iokit-open",
    "ipc-posix-sem", "file-map-executable",
})  # fmt: skip
KNOWN_FILTERS = frozenset({
    "literal", "subpath", "regex", "prefix", "global-name", "target", "remote", "local",
    "require-all", "require-any", "require-not", "path-literal", "ip", "unix-socket",
})  # fmt: skip


@dataclass(frozen=True)
class Atom:
    text: str
    string: bool = False  # a "..." literal (text is the decoded value)
    regex: bool = False  # a #"..." literal


SExpr = Atom | list["SExpr"]


class ProfileError(ValueError):
    pass


def parse(text: str) -> list[SExpr]:
    """Parse a whole profile into nested lists of atoms, or raise `ProfileError`."""
    stack: list[list[SExpr]] = [[]]
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == ";":
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif char.isspace():
            pos += 1
        elif char == "(":
            stack.append([])
            pos += 1
        elif char == ")":
            if len(stack) == 1:
                raise ProfileError(f"unbalanced ')' at offset {pos}")
            done = stack.pop()
            stack[-1].append(done)
            pos += 1
        elif char == '"' or text.startswith('#"', pos):
            regex = char == "#"
            value, pos = _string(text, pos + (2 if regex else 1))
            stack[-1].append(Atom(value, string=not regex, regex=regex))
        else:
            end = pos
            while end < len(text) and not text[end].isspace() and text[end] not in '();"':
                end += 1
            stack[-1].append(Atom(text[pos:end]))
            pos = end
    if len(stack) != 1:
        raise ProfileError(f"{len(stack) - 1} unclosed '('")
    return stack[0]


def _string(text: str, pos: int) -> tuple[str, int]:
    out: list[str] = []
    while True:
        if pos >= len(text):
            raise ProfileError("unterminated string")
        char = text[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\\":
            if pos + 1 >= len(text) or text[pos + 1] not in '\\"':
                raise ProfileError(f"unknown escape at offset {pos}")
            out.append(text[pos + 1])
            pos += 2
            continue
        if ord(char) < 0x20:
            raise ProfileError(f"control character in a string at offset {pos}")
        out.append(char)
        pos += 1


def check_profile(text: str, required_paths: Sequence[str] = ()) -> list[str]:
    """Every structural problem of a profile (an empty list means it passed)."""
    try:
        forms = parse(text)
    except ProfileError as exc:
        return [str(exc)]
    problems: list[str] = []
    if not forms or forms[0] != [Atom("version"), Atom("1")]:
        problems.append("the profile must start with (version 1)")
    if [Atom("deny"), Atom("default")] not in forms:
        problems.append("the profile must contain (deny default)")
    strings: set[str] = set()
    for form in forms:
        if not isinstance(form, list) or not form or not isinstance(form[0], Atom):
            problems.append(f"unexpected top-level form: {form!r}")
            continue
        head = form[0].text
        if head == "version":
            continue
        if head not in ("allow", "deny"):
            problems.append(f"unknown top-level form ({head} ...)")
            continue
        problems += _check_rule(form, strings)
    for path in required_paths:
        if path not in strings:
            problems.append(f"policy path missing from the profile: {path}")
    return problems


def _check_rule(form: list[SExpr], strings: set[str]) -> list[str]:
    problems = []
    operations = [a for a in form[1:] if isinstance(a, Atom)]
    filters = [f for f in form[1:] if isinstance(f, list)]
    if not operations:
        problems.append(f"rule without an operation: {form!r}")
    for op in operations:
        if op.string or op.regex or op.text not in KNOWN_OPERATIONS:
            problems.append(f"unknown operation {op.text!r}")
    for filt in filters:
        problems += _check_filter(filt, strings)
    return problems


def _check_filter(filt: SExpr, strings: set[str]) -> list[str]:
    if not isinstance(filt, list) or not filt or not isinstance(filt[0], Atom):
        return [f"malformed filter {filt!r}"]
    problems = []
    if filt[0].text not in KNOWN_FILTERS:
        problems.append(f"unknown filter {filt[0].text!r}")
    for arg in filt[1:]:
        if isinstance(arg, list):
            problems += _check_filter(arg, strings)
        elif arg.string:
            strings.add(arg.text)
    return problems
