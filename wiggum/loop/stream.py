"""The agent's output: every byte to the log and the terminal, and the completion promise.

The log gets the bytes exactly as the agent wrote them. The terminal gets them too, less the
escape sequences that act on the terminal rather than draw on it (OSC: window title,
clipboard, hyperlinks; DCS, APC, PM, SOS), which an agent has no business sending to the
user's terminal. Colours and cursor movement (CSI) pass.
"""

from __future__ import annotations

from collections import deque
from typing import BinaryIO

_STRING_INTRODUCERS = b"]P_^X"  # OSC, DCS, APC, PM, SOS after ESC
_MAX_LINE = 1 << 20  # a line longer than this cannot hold the promise we look for
_TAIL = 64 * 1024  # the end of the output is kept to find sandbox denials in it


class TerminalFilter:
    """Drops terminal-control strings from a byte stream, across chunk boundaries."""

    def __init__(self) -> None:
        self.in_string = False
        self.pending_escape = False

    def __call__(self, chunk: bytes) -> bytes:
        if not self.in_string and not self.pending_escape and b"\x1b" not in chunk:
            return chunk  # the common case: plain text
        out = bytearray()
        pos = 0
        if self.pending_escape:
            chunk = b"\x1b" + chunk
            self.pending_escape = False
        while pos < len(chunk):
            if self.in_string:
                end = _string_end(chunk, pos)
                if end < 0:
                    self.pending_escape = chunk.endswith(b"\x1b")
                    return bytes(out)
                self.in_string = False
                pos = end
                continue
            esc = chunk.find(b"\x1b", pos)
            if esc < 0:
                out += chunk[pos:]
                break
            out += chunk[pos:esc]
            if esc + 1 >= len(chunk):
                self.pending_escape = True
                break
            if chunk[esc + 1] in _STRING_INTRODUCERS:
                self.in_string = True
                pos = esc + 2
            else:
                out += b"\x1b"
                pos = esc + 1
        return bytes(out)


def _string_end(chunk: bytes, pos: int) -> int:
    """Index just after the terminator (BEL or ESC \\) of a control string, or -1."""
    bel = chunk.find(b"\x07", pos)
    st = chunk.find(b"\x1b\\", pos)
    candidates = [i + 1 for i in (bel,) if i >= 0] + [i + 2 for i in (st,) if i >= 0]
    return min(candidates) if candidates else -1


class OutputPump:
    """Receives the agent's output in chunks; writes it out and watches for the promise."""

    def __init__(
        self,
        log: BinaryIO,
        terminal: BinaryIO | None,
        promise: str,
        prompt: str,
    ) -> None:
        self.log = log
        self.terminal = terminal
        self.filter = TerminalFilter()
        self.promise = promise.encode()
        # Lines of the prompt that mention the promise: an agent echoing them has not
        # finished, it is quoting its instructions.
        self.quoted = {line.strip().encode() for line in prompt.splitlines() if promise in line}
        self.partial = b""
        self.promise_seen = False
        self.recent: deque[bytes] = deque()
        self.recent_bytes = 0
        self.bytes = 0

    @property
    def tail(self) -> bytes:
        """The last bytes of the output (where a sandbox's or agent's errors are)."""
        return b"".join(self.recent)[-_TAIL:]

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        self.log.write(chunk)
        if self.terminal is not None:
            self.terminal.write(self.filter(chunk))
        self._remember(chunk)
        if not self.promise_seen:
            self._watch(chunk)

    def _remember(self, chunk: bytes) -> None:
        self.recent.append(chunk)
        self.recent_bytes += len(chunk)
        while self.recent_bytes - len(self.recent[0]) >= _TAIL:
            self.recent_bytes -= len(self.recent.popleft())

    def _watch(self, chunk: bytes) -> None:
        """Look for the promise on complete lines, touching only what is needed: most chunks
        hold no promise, and then only the unfinished last line is kept."""
        cut = chunk.rfind(b"\n")
        edge = self.partial[-len(self.promise) :] + chunk[: len(self.promise)]
        if self.promise in chunk or self.promise in edge:
            data = self.partial + chunk
            cut = data.rfind(b"\n")
            self._check_lines(data[: cut + 1].split(b"\n"))
            self.partial = data[cut + 1 :][-_MAX_LINE:]
        elif cut < 0:
            self.partial = (self.partial + chunk)[-_MAX_LINE:]
        else:
            self.partial = chunk[cut + 1 :]

    def finish(self) -> None:
        """The output ended: the last line may have no newline."""
        if not self.promise_seen and self.partial:
            self._check_lines([self.partial])
        self.partial = b""

    def _check_lines(self, lines: list[bytes]) -> None:
        for line in lines:
            if self.promise in line and line.strip() not in self.quoted:
                self.promise_seen = True
                return
