"""One lint finding: a rule's located message and the numbers behind it."""

from __future__ import annotations

from dataclasses import dataclass

from aiscan.errors import Severity
from aiscan.span import Span

__all__ = ["Finding"]


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule found, where, and why; `details` are the figures the message rests on.

    `details` pairs a label with its value as text (`("AI", "1/12 ≈ 0.0833 F/B")`), so every
    reporter can show them without knowing the rule.
    """

    code: str
    name: str
    severity: Severity
    span: Span
    message: str
    details: tuple[tuple[str, str], ...] = ()

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.file, self.span.line, self.span.column, self.code)
