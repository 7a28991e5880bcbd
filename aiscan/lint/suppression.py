"""Inline suppressions: `// aiscan: ignore[CODE, ...]` (C) and `# aiscan: ignore[...]` (Python)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from aiscan.span import Span

__all__ = ["Suppression", "find_suppressions"]

_COMMENT = re.compile(r"(?://|/\*|#)\s*(aiscan:\s*ignore\[([^\]]*)\])")


@dataclass(frozen=True, slots=True)
class Suppression:
    """One code named in a suppression comment, located at the comment."""

    code: str
    span: Span


def find_suppressions(source: str, path: str) -> Iterator[Suppression]:
    for number, line in enumerate(source.splitlines(), start=1):
        for match in _COMMENT.finditer(line):
            column = match.start(1) + 1
            for code in filter(None, (c.strip().upper() for c in match.group(2).split(","))):
                yield Suppression(code, Span(path, number, column, number, match.end(1) + 1))
