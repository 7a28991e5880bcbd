"""Lint findings as JSON: one object per finding, its figures as a `details` object.

The schema ships in the package (`aiscan/report/schema/lint.schema.json`, `$id`
`LINT_SCHEMA_ID`); a change to this output bumps `LINT_JSON_VERSION` and the CHANGELOG.
"""

from __future__ import annotations

import json
from typing import Any

from aiscan.lint.checker import LintRun
from aiscan.lint.finding import Finding
from aiscan.project import schema_id

__all__ = ["LINT_JSON_VERSION", "LINT_SCHEMA_ID", "render_lint_json"]

LINT_JSON_VERSION = "1.0"
LINT_SCHEMA_ID = schema_id("lint")


def render_lint_json(run: LintRun) -> str:
    document = {
        "schema_version": LINT_JSON_VERSION,
        "findings": [_finding(f) for f in run.findings],
        "errors": [
            {
                "file": d.span.file,
                "line": d.span.line,
                "column": d.span.column,
                "severity": d.severity.value,
                "message": d.message,
            }
            for d in run.errors
        ],
        "rules": [r.code for r in run.rules],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "file": finding.span.file,
        "line": finding.span.line,
        "column": finding.span.column,
        "end_line": finding.span.end_line,
        "end_column": finding.span.end_column or None,
        "details": dict(finding.details),
    }
