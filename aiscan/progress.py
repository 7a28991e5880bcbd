"""A status line for long commands on a terminal: rewritten in place, erased at the end, and
silent when standard error is piped or under CI, so logs and tests see nothing of it."""

from __future__ import annotations

import os
from typing import TextIO

from aiscan.printable import printable

__all__ = ["StatusLine"]

_WIDTH = 78
"""Characters shown at most: one terminal line, so `\\r` returns to its start."""


class StatusLine:
    """`show` replaces the line's text; `close` erases it."""

    def __init__(self, stream: TextIO) -> None:
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(callable(isatty) and isatty() and not os.environ.get("CI"))
        self.stream = stream

    def show(self, text: str) -> None:
        if self.enabled:
            # Paths in the text are escaped: an ESC in a file name must not drive the terminal.
            shown = printable(text)
            shown = shown if len(shown) <= _WIDTH else shown[: _WIDTH - 1] + "…"
            self.stream.write(f"\r\033[K{shown}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
