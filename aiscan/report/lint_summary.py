"""What `check` prints after the findings: the summary line, `--statistics`, and colour.

The summary counts failing findings (warnings, errors) apart from notes, which are
informational and fail the run only with `fail-on-notes`, and says how many files could
not be analyzed, so a run with input errors never reads "All checks passed."
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from typing import ClassVar, TextIO

from aiscan.errors import Severity
from aiscan.lint.checker import LintRun
from aiscan.report.words import counted

__all__ = ["Palette", "palette_for", "statistics", "summary_line"]


class Palette:
    """ANSI colours for a terminal; every method returns its text unchanged when off."""

    _CODES: ClassVar[dict[str, str]] = {
        "error": "1;31",
        "warning": "1;33",
        "note": "1;36",
        "bold": "1",
        "dim": "2",
    }

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, style: str, text: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\033[{self._CODES[style]}m{text}\033[0m"


def palette_for(stream: TextIO, environ: Mapping[str, str] | None = None) -> Palette:
    """Colour only on a terminal, and never when `NO_COLOR` is set (https://no-color.org)."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR", "") != "":
        return Palette(False)
    isatty = getattr(stream, "isatty", None)
    return Palette(bool(isatty and isatty()))


def summary_line(run: LintRun) -> str:
    """`Found 3 warnings (1 note) in 2 files.`, `All checks passed.` or what failed to load."""
    failing = Counter(f.severity for f in run.failures)
    parts = [counted(failing[s], s.value) for s in (Severity.ERROR, Severity.WARNING) if failing[s]]
    notes = len(run.notes)
    broken = len({e.span.file for e in run.errors})
    if not parts and not notes and not broken:
        return "All checks passed."
    if parts:
        head = f"Found {' and '.join(parts)}" + (f" ({counted(notes, 'note')})" if notes else "")
    else:
        head = f"Found {counted(notes, 'note')}" if notes else "No findings"
    if run.findings:
        head += f" in {counted(len({f.span.file for f in run.findings}), 'file')}"
    if notes and not parts:
        head += " (notes do not fail the run)"
    if broken:
        head += f"; {counted(broken, 'file')} could not be analyzed"
    return head + "."


def statistics(run: LintRun) -> str:
    """One line per rule, most frequent first, as ruff's `--statistics` prints them."""
    counts = Counter((f.code, f.name) for f in run.findings)
    width = len(str(max(counts.values(), default=0)))
    lines = [
        f"{count:>{width}}  {code}  {name}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if run.errors:
        lines.append(f"{len(run.errors):>{width}}  {'error':6}  input errors (files not analyzed)")
    return "".join(f"{line}\n" for line in lines)
