"""Lint findings as GitHub Actions workflow commands (`::warning file=...,line=...::msg`).

A workflow step running `aiscan check --output-format github` annotates the pull request's
changed lines. Values are escaped as the runner expects (`%`, CR, LF; in properties also
`:` and `,`).
"""

from __future__ import annotations

from aiscan.errors import Severity
from aiscan.lint.checker import LintRun

__all__ = ["render_github"]

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def render_github(run: LintRun) -> str:
    lines = []
    for finding in run.findings:
        span = finding.span
        properties = ",".join(
            f"{key}={_property(value)}"
            for key, value in (
                ("file", span.file),
                ("line", str(span.line)),
                ("col", str(span.column)),
                ("title", f"{finding.code} {finding.name}"),
            )
        )
        command = _COMMANDS[finding.severity]
        lines.append(f"::{command} {properties}::{_data(f'{finding.code} {finding.message}')}\n")
    return "".join(lines)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
