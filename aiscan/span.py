"""Source positions: 1-based lines and columns, converted once at each frontend's edge."""

from __future__ import annotations

from dataclasses import dataclass

from aiscan.printable import printable_path

__all__ = ["Span"]


@dataclass(frozen=True, slots=True)
class Span:
    """A located range in a source file; `end_line` is inclusive, columns are 1-based."""

    file: str
    line: int
    column: int = 1
    end_line: int = 0
    end_column: int = 0

    def __post_init__(self) -> None:
        if self.end_line < self.line:
            object.__setattr__(self, "end_line", self.line)

    def lines(self) -> str:
        """`12` or `12-18`, the form tables and messages use."""
        if self.end_line > self.line:
            return f"{self.line}-{self.end_line}"
        return str(self.line)

    def labelled(self) -> str:
        """`line 12` or `lines 12-18`: the words a sentence needs around `lines()`."""
        return f"line{'s' if self.end_line > self.line else ''} {self.lines()}"

    def location(self) -> str:
        """`file:line:col`, the compilers' form that editors' problem matchers read, with
        the file name made safe to print."""
        return f"{printable_path(self.file)}:{self.line}:{self.column}"

    def through(self, other: Span) -> Span:
        """The span from the start of `self` to the end of `other`."""
        return Span(self.file, self.line, self.column, other.end_line, other.end_column)
