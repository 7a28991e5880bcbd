"""Lint findings as GitHub Actions workflow commands (`::warning file=...,line=...::msg`).

A workflow step running `aiscan check --output-format github` annotates the pull request's
changed lines. Values are escaped as the runner expects (`%`, CR, LF; in properties also
`:` and `,`).
"""

from __future__ import annotations

from aiscan.errors import Severity
from aiscan.lint.checker import LintRun
from aiscan.printable import printable
from aiscan.span import Span

__all__ = ["render_github"]

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def render_github(run: LintRun) -> str:
    """One workflow command per input error and per finding; nothing else on stdout, so a
    value can never start a command of its own (every CR and LF in it is escaped)."""
    lines = [
        _command(Severity.ERROR, error.span, "aiscan input error", error.message)
        for error in run.errors
    ]
    lines += [
        _command(
            finding.severity,
            finding.span,
            f"{finding.code} {finding.name}",
            f"{finding.code} {finding.message}",
        )
        for finding in run.findings
    ]
    return "".join(lines)


def _command(severity: Severity, span: Span, title: str, message: str) -> str:
    properties = ",".join(
        f"{key}={_property(value)}"
        for key, value in (
            ("file", span.file),
            ("line", str(span.line)),
            ("col", str(span.column)),
            ("title", title),
        )
    )
    return f"::{_COMMANDS[severity]} {properties}::{_data(message)}\n"


def _data(text: str) -> str:
    text = printable(text, keep_line_breaks=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
