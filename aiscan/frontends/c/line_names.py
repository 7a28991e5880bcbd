"""File names as they travel through `#line` directives, from the preprocessor to the parser.

pycparser takes the name between a directive's quotes as it is written, escapes and all
(`"we\\"ird.c"` comes back as `we\\"ird.c`), and a raw `"` or newline in it breaks the
directive. So every name is written with its `\\`, `"` and control characters escaped, as
a C string literal holds them, and every name read back from the parser is unescaped.
Without the round trip, a file named `we"ird.c` came back as another file, and its
functions were dropped as a header's (issue 35).
"""

from __future__ import annotations

import re

__all__ = ["file_of", "line_name"]

_UNSAFE = re.compile(r'["\\\x00-\x1f\x7f]')
_ESCAPE = re.compile(r'\\(["\\]|[0-7]{3})')


def line_name(path: str) -> str:
    """`path` as it goes between the quotes of a `#line` directive."""
    return _UNSAFE.sub(_escaped, path)


def file_of(name: str) -> str:
    """The path a `#line` name (a parser coordinate's file) stands for."""
    if "\\" not in name:
        return name
    return _ESCAPE.sub(_unescaped, name)


def _escaped(match: re.Match[str]) -> str:
    character = match.group(0)
    return "\\" + character if character in '"\\' else f"\\{ord(character):03o}"


def _unescaped(match: re.Match[str]) -> str:
    escape = match.group(1)
    return escape if len(escape) == 1 else chr(int(escape, 8))
