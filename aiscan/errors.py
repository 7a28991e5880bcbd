"""Diagnostics about the user's input, kept apart from internal errors.

Problems in analyzed code become `Diagnostic` values with spans; only configuration and
usage problems raise, and they raise `UsageError` so the CLI can exit 2 with one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from aiscan.printable import printable
from aiscan.span import Span

__all__ = ["AiscanError", "Diagnostic", "InputError", "Severity", "UsageError"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One located message: `file:line:col: severity: message`."""

    span: Span
    severity: Severity
    message: str

    def format(self) -> str:
        return f"{self.span.location()}: {self.severity.value}: {printable(self.message)}"


class AiscanError(Exception):
    """Base of every error aiscan raises on purpose."""


class UsageError(AiscanError):
    """Bad command line, configuration or data file; the CLI exits 2."""


class InputError(AiscanError):
    """A source file that cannot be analyzed at all; carries its located diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic
