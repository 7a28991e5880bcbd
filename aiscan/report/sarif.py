"""Lint findings as SARIF 2.1.0, the form GitHub code scanning uploads.

Rule metadata comes from each rule's docstring; artifact paths are relative to the
repository root (`%SRCROOT%`); `partialFingerprints.primaryLocationLineHash` hashes the
rule, the path and the stripped source line, so a finding keeps its identity when lines
move above it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiscan import __version__
from aiscan.errors import Severity
from aiscan.lint.checker import LintRun, help_url
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule
from aiscan.project import REPOSITORY_URL

__all__ = ["SARIF_SCHEMA", "render_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def render_sarif(run: LintRun) -> str:
    rules = list(run.rules)
    for finding in run.findings:
        if all(rule.code != finding.code for rule in rules):
            from aiscan.lint.registry import get_rule

            rules.append(get_rule(finding.code))
    index = {rule.code: i for i, rule in enumerate(rules)}
    occurrences: Counter[str] = Counter()
    results = []
    for finding in run.findings:
        results.append(_result(finding, index[finding.code], run, occurrences))
    document: dict[str, Any] = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "aiscan",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": REPOSITORY_URL,
                        "rules": [_rule(rule, run.help_url) for rule in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": run.root.resolve().as_uri() + "/"}},
                "invocations": [_invocation(run)],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule(rule: type[Rule], template: str) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "helpUri": help_url(template, rule.code, rule.name),
        "shortDescription": {"text": rule.title()},
        "fullDescription": {"text": " ".join(rule.section("What it does").split())},
        "help": {"text": rule.documentation(), "markdown": rule.documentation()},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": ["performance"], "options": dict(rule.options)},
    }


def _result(
    finding: Finding, rule_index: int, run: LintRun, occurrences: Counter[str]
) -> dict[str, Any]:
    artifact = _artifact(finding.span.file, run.root)
    uri = artifact["uri"]
    region: dict[str, Any] = {"startLine": finding.span.line, "startColumn": finding.span.column}
    if finding.span.end_line > finding.span.line:
        region["endLine"] = finding.span.end_line
    lines = run.sources.get(finding.span.file, "").splitlines()
    text = lines[finding.span.line - 1] if 0 < finding.span.line <= len(lines) else ""
    digest = hashlib.sha256(f"{finding.code}\0{uri}\0{text.strip()}".encode()).hexdigest()[:16]
    occurrences[digest] += 1
    return {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
        "partialFingerprints": {"primaryLocationLineHash": f"{digest}:{occurrences[digest]}"},
        "properties": {"details": dict(finding.details)},
    }


def _artifact(path: str, root: Path) -> dict[str, str]:
    """A root-relative location when the file is under the root, else an absolute URI;
    both percent-encoded, as URIs are (a name holding `%0A` stays that name)."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(root.resolve()).as_posix()
        return {"uri": quote(relative, safe="/"), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _invocation(run: LintRun) -> dict[str, Any]:
    notifications = [
        {
            "level": "error",
            "message": {"text": error.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(error.span.file, run.root),
                        "region": {"startLine": error.span.line},
                    }
                }
            ],
        }
        for error in run.errors
    ]
    return {"executionSuccessful": not run.errors, "toolExecutionNotifications": notifications}
