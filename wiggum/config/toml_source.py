"""Reading `ralph.toml`: values from tomllib, line numbers from a small scanner.

tomllib is the source of truth for values; it does not report where a key was. The scanner
below walks the already-validated text once to map every key path (array items included) to
its line, so errors can say `ralph.toml:12: sandbox.allowPaths[2]: ...`. If the scanner ever
meets something it does not follow, it stops and the remaining keys simply have no line.
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from pathlib import Path

from wiggum.config.document import Document, KeyPath
from wiggum.errors import ConfigError, Problem

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ERROR_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)$")


def parse_toml(text: str, file: Path | None = None) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_ERROR_LINE.search(message)
        line = int(match.group(1)) if match else None
        message = _TOML_ERROR_LINE.sub("", message)
        raise ConfigError(
            [Problem("", f"not valid TOML: {message}", file, line)],
            "See https://toml.io for the syntax, or docs/configuration.md for examples.",
        ) from None
    return Document(file, data, locate_keys(text))


def locate_keys(text: str) -> dict[KeyPath, int]:
    scanner = _Scanner(text)
    with contextlib.suppress(IndexError, ValueError):  # partial line info is still useful
        scanner.scan_document()
    return scanner.lines


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.lines: dict[KeyPath, int] = {}

    def peek(self, length: int = 1) -> str:
        return self.text[self.pos : self.pos + length]

    def step(self, count: int = 1) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + count)
        self.pos += count

    def skip_blank(self, *, newlines: bool) -> None:
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t\r" or (newlines and char == "\n"):
                self.step()
            elif char == "#":
                end = self.text.find("\n", self.pos)
                self.step((len(self.text) if end < 0 else end) - self.pos)
            else:
                return

    def scan_document(self) -> None:
        table: tuple[str, ...] = ()
        while True:
            self.skip_blank(newlines=True)
            if self.pos >= len(self.text):
                return
            if self.peek() == "[":
                table = self.scan_header()
            else:
                self.scan_pair(table)

    def scan_header(self) -> tuple[str, ...]:
        line = self.line
        brackets = 2 if self.peek(2) == "[[" else 1
        self.step(brackets)
        keys = self.scan_key()
        self.skip_blank(newlines=False)
        self.step(brackets)
        self.lines.setdefault(keys, line)
        return keys

    def scan_pair(self, prefix: KeyPath) -> None:
        line = self.line
        path = (*prefix, *self.scan_key())
        self.lines[path] = line
        self.skip_blank(newlines=False)
        if self.peek() != "=":
            raise ValueError("expected '='")
        self.step()
        self.scan_value(path)

    def scan_key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            self.skip_blank(newlines=False)
            char = self.peek()
            if char in "\"'":
                start = self.pos
                self.skip_string()
                parts.append(tomllib.loads(f"k = {self.text[start : self.pos]}")["k"])
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if not match:
                    raise ValueError("expected a key")
                parts.append(match.group())
                self.step(match.end() - self.pos)
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                return tuple(parts)
            self.step()

    def skip_string(self) -> None:
        quote = self.peek()
        if self.peek(3) == quote * 3:
            end = self.text.index(quote * 3, self.pos + 3)
            while self.text.startswith(quote, end + 3):  # """a"""" ends with a quote inside
                end += 1
            self.step(end + 3 - self.pos)
            return
        end = self.pos + 1
        while self.text[end] != quote:
            end += 2 if quote == '"' and self.text[end] == "\\" else 1
        self.step(end + 1 - self.pos)

    def scan_value(self, path: KeyPath) -> None:
        self.skip_blank(newlines=False)
        char = self.peek()
        if char in "\"'":
            self.skip_string()
        elif char == "[":
            self.scan_array(path)
        elif char == "{":
            self.scan_inline_table(path)
        else:
            match = re.compile(r"[^,\]}#\n]*").match(self.text, self.pos)
            self.step(match.end() - self.pos if match else 0)

    def scan_array(self, path: KeyPath) -> None:
        self.step()
        index = 0
        while True:
            self.skip_blank(newlines=True)
            if self.peek() == "]":
                self.step()
                return
            self.lines[(*path, index)] = self.line
            self.scan_value((*path, index))
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.step()
                index += 1
            elif self.peek() != "]":
                raise ValueError("expected ',' or ']'")

    def scan_inline_table(self, path: KeyPath) -> None:
        self.step()
        while True:
            self.skip_blank(newlines=True)
            if self.peek() == "}":
                self.step()
                return
            self.scan_pair(path)
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.step()
            elif self.peek() != "}":
                raise ValueError("expected ',' or '}'")
