"""A static reader for `ralph.config.cjs`: `module.exports = <object literal>;`.

The literal may use what people write in hand-made JavaScript config (comments, single quotes,
unquoted keys, trailing commas), i.e. JSON5's object syntax. Anything that would need running
the file (require, process.env, spread, functions, variables, expressions) is refused with the
line it is on. wiggum never executes JavaScript.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wiggum.config.document import Document, KeyPath, format_key
from wiggum.errors import ConfigError, Problem

HINT = (
    "wiggum reads ralph.config.cjs without running it, so `module.exports =` must be followed "
    "by a plain literal: strings, numbers, booleans, arrays and objects. Write the value out, "
    "or move the configuration to ralph.toml."
)

_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_PUNCT = ("...", "=>", "{", "}", "[", "]", "(", ")", ":", ",", "=", ";", ".", "+", "-")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_CODE_WORDS = {
    "require": "require(...) loads another file at run time",
    "process": "process.env is read at run time",
    "function": "functions are code",
    "async": "functions are code",
    "class": "classes are code",
    "new": "`new` runs code",
    "import": "imports load code",
    "undefined": "undefined is not a value a setting can have; leave the key out instead",
    "NaN": "NaN is not a usable setting value",
    "Infinity": "Infinity is not a usable setting value",
}


@dataclass(frozen=True)
class Token:
    kind: str  # "punct" | "string" | "template" | "number" | "ident" | "eof"
    text: str
    value: Any
    line: int


class _Fail(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def parse_cjs(text: str, file: Path | None = None) -> Document:
    """Parse the text of a ralph.config.cjs into a `Document`, or raise `ConfigError`."""
    try:
        parser = _Parser(_tokenize(text))
        data = parser.parse_module()
    except _Fail as fail:
        raise ConfigError([Problem("", fail.message, file, fail.line)], HINT) from None
    return Document(file, data, parser.lines)


def _tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos, line, end = 0, 1, len(text)
    while pos < end:
        char = text[pos]
        if char == "\n":
            line += 1
            pos += 1
        elif char.isspace() or char == "\ufeff":
            pos += 1
        elif text.startswith("//", pos):
            newline = text.find("\n", pos)
            pos = end if newline < 0 else newline
        elif text.startswith("/*", pos):
            close = text.find("*/", pos + 2)
            if close < 0:
                raise _Fail("a /* comment is never closed", line)
            line += text.count("\n", pos, close)
            pos = close + 2
        elif char in "'\"`":
            token, pos, newlines = _read_string(text, pos, line)
            tokens.append(token)
            line += newlines
        elif match := _NUMBER.match(text, pos):
            literal = match.group()
            number = int(literal, 16) if literal[:2] in ("0x", "0X") else _decimal(literal)
            tokens.append(Token("number", literal, number, line))
            pos = match.end()
        elif match := _IDENT.match(text, pos):
            tokens.append(Token("ident", match.group(), match.group(), line))
            pos = match.end()
        else:
            punct = next((p for p in _PUNCT if text.startswith(p, pos)), None)
            if punct is None:
                raise _Fail(f"unexpected character {char!r}", line)
            tokens.append(Token("punct", punct, punct, line))
            pos += len(punct)
    tokens.append(Token("eof", "end of file", None, line))
    return tokens


def _decimal(literal: str) -> int | float:
    if any(c in literal for c in ".eE"):
        return float(literal)
    return int(literal)


def _read_string(text: str, start: int, line: int) -> tuple[Token, int, int]:
    quote = text[start]
    pos, out, newlines = start + 1, [], 0
    while True:
        if pos >= len(text):
            raise _Fail("a string is never closed", line)
        char = text[pos]
        if char == quote:
            break
        if quote == "`" and text.startswith("${", pos):
            raise _Fail("template literals with ${...} are computed at run time", line + newlines)
        if char == "\n":
            if quote != "`":
                raise _Fail("a string is never closed on its line", line + newlines)
            newlines += 1
        if char == "\\":
            escaped, pos, continued = _read_escape(text, pos, line + newlines)
            newlines += continued
            out.append(escaped)
            continue
        out.append(char)
        pos += 1
    kind = "template" if quote == "`" else "string"
    value = _join_surrogates("".join(out), line)
    return Token(kind, text[start : pos + 1], value, line), pos + 1, newlines


def _join_surrogates(value: str, line: int) -> str:
    """A character beyond U+FFFF is escaped as two UTF-16 halves (a surrogate pair): join them."""
    try:
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        raise _Fail("a \\u escape is half of a character (an unpaired surrogate)", line) from None


def _read_escape(text: str, pos: int, line: int) -> tuple[str, int, int]:
    """Decode the escape at text[pos] == "\\"; return (chars, next position, newlines eaten)."""
    if pos + 1 >= len(text):
        raise _Fail("a string is never closed", line)
    char = text[pos + 1]
    if char == "\n":  # line continuation
        return "", pos + 2, 1
    if char in _ESCAPES:
        return _ESCAPES[char], pos + 2, 0
    if char == "x":
        return _hex_char(text[pos + 2 : pos + 4], 2, line), pos + 4, 0
    if char == "u":
        if text.startswith("{", pos + 2):
            close = text.find("}", pos + 3)
            digits = text[pos + 3 : close] if close > 0 else ""
            return _hex_char(digits, len(digits) or 1, line), close + 1, 0
        return _hex_char(text[pos + 2 : pos + 6], 4, line), pos + 6, 0
    return char, pos + 2, 0


def _hex_char(digits: str, width: int, line: int) -> str:
    if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+", digits):
        raise _Fail(f"invalid escape sequence \\x/\\u with {digits!r}", line)
    code = int(digits, 16)
    if code > 0x10FFFF:
        raise _Fail(f"escape \\u{{{digits}}} is beyond Unicode", line)
    return chr(code)


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.lines: dict[KeyPath, int] = {}

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def accept(self, text: str) -> bool:
        if self.current.kind == "punct" and self.current.text == text:
            self.advance()
            return True
        return False

    def parse_module(self) -> dict[str, Any]:
        while self.current.kind == "string":  # directives such as 'use strict';
            self.advance()
            self.accept(";")
        start = self.current
        if not self._at_module_exports():
            raise _Fail(self._describe_top_level(start), start.line)
        for _ in range(4):  # module . exports =
            self.advance()
        value = self.parse_value(())
        if not isinstance(value, dict):
            raise _Fail("module.exports must be an object literal { ... }", start.line)
        self.accept(";")
        if self.current.kind != "eof":
            raise _Fail(
                f"unexpected {self.current.text!r} after the exported object; the file must "
                "hold only `module.exports = { ... };`",
                self.current.line,
            )
        return value

    def _at_module_exports(self) -> bool:
        texts = [t.text for t in self.tokens[self.index : self.index + 4]]
        return texts == ["module", ".", "exports", "="]

    def _describe_top_level(self, token: Token) -> str:
        if token.kind == "eof":
            return "the file is empty; it must contain `module.exports = { ... };`"
        if token.text in ("const", "let", "var"):
            return (
                f"`{token.text}` declarations are code; put the settings directly in "
                "`module.exports = { ... };`"
            )
        if token.text in ("export", "import"):
            return "ES module syntax is not supported; use `module.exports = { ... };`"
        if token.text in _CODE_WORDS:
            return f"{_CODE_WORDS[token.text]}; only `module.exports = {{ ... }};` is allowed"
        return f"expected `module.exports = {{ ... }};`, found {token.text!r}"

    def parse_value(self, path: KeyPath) -> Any:
        token = self.current
        self.lines.setdefault(path, token.line)
        signed = self.tokens[self.index + 1].kind == "number"
        if token.kind == "punct" and token.text in "+-" and signed:
            self.advance()
            number = self.advance().value
            return self._after_value(-number if token.text == "-" else number, path)
        if token.kind in ("string", "template", "number"):
            self.advance()
            return self._after_value(token.value, path)
        if token.kind == "ident" and token.text in ("true", "false", "null"):
            self.advance()
            return self._after_value({"true": True, "false": False, "null": None}[token.text], path)
        if self.accept("{"):
            return self._after_value(self.parse_object(path), path)
        if self.accept("["):
            return self._after_value(self.parse_array(path), path)
        raise _Fail(self._describe_value(token, path), token.line)

    def _after_value(self, value: Any, path: KeyPath) -> Any:
        token = self.current
        if token.kind == "punct" and token.text in (",", "}", "]", ";"):
            return value
        if token.kind == "eof":
            return value
        where = f" in {format_key(path)}" if path else ""
        raise _Fail(
            f"expressions are not allowed{where}: {token.text!r} after a value would be "
            "computed at run time",
            token.line,
        )

    def _describe_value(self, token: Token, path: KeyPath) -> str:
        where = f"{format_key(path)}: " if path else ""
        if token.kind == "punct" and token.text == "...":
            return f"{where}spread (...) copies values at run time"
        if token.kind == "punct" and token.text == "(":
            return f"{where}functions and parenthesised expressions are code"
        if token.kind == "ident" and token.text in _CODE_WORDS:
            return f"{where}{_CODE_WORDS[token.text]}"
        if token.kind == "ident":
            return f"{where}`{token.text}` refers to a variable; write the value itself"
        if token.kind == "eof":
            return f"{where}the file ends where a value was expected"
        return f"{where}expected a value, found {token.text!r}"

    def parse_object(self, path: KeyPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while not self.accept("}"):
            key_token = self.current
            key = self._parse_key(path)
            if key in out:
                raise _Fail(f"{format_key((*path, key))} is defined twice", key_token.line)
            self.lines[(*path, key)] = key_token.line
            out[key] = self.parse_value((*path, key))
            if not self.accept(","):
                if not self.accept("}"):
                    raise self._expected("'}'")
                break
        return out

    def _parse_key(self, path: KeyPath) -> str:
        token = self.current
        if token.kind == "punct" and token.text == "...":
            where = format_key(path) or "module.exports"
            raise _Fail(f"{where}: spread (...) copies values at run time", token.line)
        if token.kind == "punct" and token.text == "[":
            raise _Fail("computed keys [..] are code", token.line)
        if token.kind not in ("ident", "string", "number"):
            raise _Fail(f"expected a key, found {token.text!r}", token.line)
        self.advance()
        if not self.accept(":"):
            if self.current.text == "(":
                raise _Fail(f"{token.text}(): methods are functions, which are code", token.line)
            raise _Fail(
                f"expected ':' after key {token.text!r} (shorthand properties refer to variables)",
                token.line,
            )
        return str(token.value)

    def _expected(self, closer: str) -> _Fail:
        return _Fail(f"expected ',' or {closer}, found {self.current.text!r}", self.current.line)

    def parse_array(self, path: KeyPath) -> list[Any]:
        out: list[Any] = []
        while not self.accept("]"):
            if self.current.text == ",":
                raise _Fail(f"{format_key(path)}: empty slot in the list", self.current.line)
            out.append(self.parse_value((*path, len(out))))
            if not self.accept(","):
                if not self.accept("]"):
                    raise self._expected("']'")
                break
        return out
