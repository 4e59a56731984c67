"""A status line pinned to the bottom of the terminal while the agent's output scrolls above.

It uses the terminal's scrolling region (as apt's progress bar does): rows 1..N-1 scroll,
row N holds the status. Off a terminal, wiggum prints plain lines instead.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from typing import TextIO


class StatusLine:
    def __init__(self, stream: TextIO, text: Callable[[], str], lock: threading.Lock) -> None:
        self.stream = stream
        self.text = text
        self.lock = lock
        self.rows = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def start(self) -> None:
        self.rows = shutil.get_terminal_size().lines
        with self.lock:
            # Make room, then confine scrolling to the rows above the last one.
            self.stream.write(f"\n\x1b7\x1b[1;{self.rows - 1}r\x1b8\x1b[1A")
            self.stream.flush()
        self.thread.start()

    def refresh(self) -> None:
        with self.lock:
            columns = shutil.get_terminal_size().columns
            line = self.text()[: columns - 1]
            self.stream.write(f"\x1b7\x1b[{self.rows};1H\x1b[2K\x1b[7m{line}\x1b[0m\x1b8")
            self.stream.flush()

    def _tick(self) -> None:
        while not self.stopping.wait(1.0):
            self.refresh()

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join()
        with self.lock:
            self.stream.write(f"\x1b7\x1b[r\x1b[{self.rows};1H\x1b[2K\x1b8")
            self.stream.flush()
