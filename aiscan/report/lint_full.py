"""Lint findings with their source line, a caret under the column, and the numbers."""

from __future__ import annotations

from aiscan.lint.checker import LintRun
from aiscan.lint.finding import Finding
from aiscan.printable import printable
from aiscan.report.lint_summary import Palette, summary_line

__all__ = ["render_full"]


def render_full(run: LintRun, palette: Palette | None = None) -> str:
    paint = (palette or Palette(False)).paint
    blocks = [
        _block(f, run.sources.get(f.span.file, ""), palette or Palette(False)) for f in run.findings
    ]
    return "".join(blocks) + paint("bold", summary_line(run)) + "\n"


def _block(finding: Finding, source: str, palette: Palette) -> str:
    paint = palette.paint
    lines = source.splitlines()
    number = finding.span.line
    severity = finding.severity.value
    head = (
        f"{paint('bold', finding.span.location())}: {paint(severity, severity)}: "
        f"{finding.code} [{finding.name}] {printable(finding.message)}\n"
    )
    gutter = " " * len(str(number))
    body = ""
    if 0 < number <= len(lines):
        line = lines[number - 1]
        text = printable(line.expandtabs(4))
        before = printable(line[: max(finding.span.column, 1) - 1].expandtabs(4))
        caret = " " * len(before) + paint(severity, "^")
        body = f" {number} | {text}\n {gutter} | {caret}\n"
    numbers = "".join(f" {gutter} = {label}: {value}\n" for label, value in finding.details)
    return head + body + numbers + "\n"
