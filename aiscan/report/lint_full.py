"""Lint findings with their source line, a caret under the column, and the numbers."""

from __future__ import annotations

from collections import Counter

from aiscan.lint.checker import LintRun
from aiscan.lint.finding import Finding

__all__ = ["render_full", "summary_line"]


def render_full(run: LintRun) -> str:
    blocks = [_block(f, run.sources.get(f.span.file, "")) for f in run.findings]
    return "".join(blocks) + summary_line(run) + "\n"


def summary_line(run: LintRun) -> str:
    if not run.findings:
        return "All checks passed."
    severities = Counter(f.severity.value for f in run.findings)
    kinds = ", ".join(
        f"{count} {name}{'' if count == 1 else 's'}" for name, count in sorted(severities.items())
    )
    files = len({f.span.file for f in run.findings})
    plural = "" if len(run.findings) == 1 else "s"
    return f"Found {len(run.findings)} finding{plural} ({kinds}) in {files} file(s)."


def _block(finding: Finding, source: str) -> str:
    lines = source.splitlines()
    number = finding.span.line
    head = (
        f"{finding.span.location()}: {finding.severity.value}: {finding.code} "
        f"[{finding.name}] {finding.message}\n"
    )
    gutter = " " * len(str(number))
    body = ""
    if 0 < number <= len(lines):
        text = lines[number - 1].expandtabs(4)
        caret = " " * (max(finding.span.column, 1) - 1) + "^"
        body = f" {number} | {text}\n {gutter} | {caret}\n"
    numbers = "".join(f" {gutter} = {label}: {value}\n" for label, value in finding.details)
    return head + body + numbers + "\n"
