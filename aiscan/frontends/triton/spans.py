"""libcst positions to IR spans: 0-based columns made 1-based, once, at the edge."""

from __future__ import annotations

from libcst.metadata import CodeRange

from aiscan.span import Span

__all__ = ["span_of"]


def span_of(path: str, where: CodeRange) -> Span:
    return Span(
        path, where.start.line, where.start.column + 1, where.end.line, where.end.column + 1
    )
