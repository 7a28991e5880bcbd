"""Text from the scanned tree made safe to print on a terminal or in a CI log.

File names and source text are the scanned tree's, not ours: a name can hold a newline (and
so forge a line of output, a GitHub workflow command among them), an ESC or OSC sequence
(and so drive the terminal), or a bidirectional override (and so reorder what a reader
sees). Every such character is shown as a visible escape, `\\n`, `\\x1b`, `\\u202e`, as
Python writes it; everything else, non-ASCII letters included, is printed as it is.
"""

from __future__ import annotations

import re

__all__ = ["printable", "printable_path"]

# C0 controls but TAB, DEL, C1 controls, and the Unicode format characters that reorder or
# hide text (bidi embeddings, overrides and isolates, line and paragraph separators).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def printable(text: str, *, keep_line_breaks: bool = False) -> str:
    """`text` with every character that could act on a terminal or a log shown escaped;
    `keep_line_breaks` leaves CR and LF to a format that encodes them itself."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda match: _escape(match.group(), keep_line_breaks), text)


def printable_path(path: str) -> str:
    """A file name as a line may begin with it: escaped, and never starting with `::`,
    which a GitHub Actions runner would read as a workflow command (`./` is the same file)."""
    safe = printable(path)
    return "./" + safe if safe.startswith("::") else safe


def _escape(character: str, keep_line_breaks: bool) -> str:
    if character in _NAMED:
        if keep_line_breaks:
            return character
        return _NAMED[character]
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
