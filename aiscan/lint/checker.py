"""Run the enabled rules on an analysis, apply suppressions, report the unused ones, and
give each finding the severity the settings make it (`fail-on` turns notes into warnings)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from aiscan.errors import Diagnostic, Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.registry import RULES, UNUSED_SUPPRESSION
from aiscan.lint.rule import Rule
from aiscan.lint.settings import LintSettings
from aiscan.lint.suppression import find_suppressions
from aiscan.project import LINT_HELP_URL

__all__ = ["DEFAULT_HELP_URL", "LintRun", "check_analysis", "help_url", "unique_findings"]

DEFAULT_HELP_URL = LINT_HELP_URL
"""Where a rule's page lives: `docs/lint.md`, one heading per rule (`### AIS001 memory-bound`,
anchor `ais001-memory-bound`); the `help-url` setting points it at a copy of your own."""


def help_url(template: str, code: str, name: str) -> str:
    """The documentation page of one rule, from the `help-url` template."""
    return template.format(code=code, code_lower=code.lower(), name=name)


def unique_findings(findings: list[Finding]) -> list[Finding]:
    """One finding per rule and place: identical ones are dropped, and several messages of
    one rule at one position are joined, so a line is never reported twice for one cause."""
    merged: dict[tuple[str, str, int, int], Finding] = {}
    for finding in findings:
        key = (finding.code, finding.span.file, finding.span.line, finding.span.column)
        first = merged.get(key)
        if first is None:
            merged[key] = finding
        elif finding.message not in first.message.split("; "):
            merged[key] = replace(
                first,
                message=f"{first.message}; {finding.message}",
                details=_merged_details(first.details, finding.details),
            )
    return list(merged.values())


def _merged_details(
    first: tuple[tuple[str, str], ...], second: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """One entry per label; a label both have keeps both values (`kind: a, b`)."""
    values: dict[str, list[str]] = {}
    for label, value in (*first, *second):
        if value not in values.setdefault(label, []):
            values[label].append(value)
    return tuple((label, ", ".join(texts)) for label, texts in values.items())


@dataclass(frozen=True)
class LintRun:
    """Everything a lint reporter needs: findings, the sources they point into, the rules."""

    findings: tuple[Finding, ...]
    sources: dict[str, str]
    rules: tuple[type[Rule], ...]
    errors: tuple[Diagnostic, ...] = ()
    """Files that could not be analyzed (exit code 2)."""
    root: Path = field(default_factory=Path.cwd)
    """Paths in SARIF are relative to it (the repository root when there is one)."""
    help_url: str = DEFAULT_HELP_URL
    """Template of a rule's documentation page: `{code}` and `{name}` are filled in."""
    warnings: tuple[Diagnostic, ...] = ()
    """Diagnostics of analyzed files (a header treated as empty): shown, exit code unchanged."""
    shapes_used: tuple[str, ...] = ()
    """Keys of the stated shapes (`--shape`) that named a parameter of an analyzed file."""

    @property
    def failures(self) -> tuple[Finding, ...]:
        """Findings that fail the run: every severity but notes (`fail-on` has already
        made the notes it selects warnings)."""
        return tuple(f for f in self.findings if f.severity is not Severity.NOTE)

    @property
    def notes(self) -> tuple[Finding, ...]:
        """Informational findings (AIS001 placements, AIS008 analysis gaps): shown and
        counted, not failing."""
        return tuple(f for f in self.findings if f.severity is Severity.NOTE)


def check_analysis(context: LintContext, settings: LintSettings) -> list[Finding]:
    """The findings for one analyzed file, sorted by position, suppressions applied."""
    rules = settings.enabled_for(context.path)
    findings: list[Finding] = []
    for rule in rules:
        if rule.needs_devices and not context.devices:
            continue
        findings += rule().check(context, settings.options_for(rule))
    findings = unique_findings(findings)
    kept: list[Finding] = []
    used: set[tuple[int, str]] = set()
    suppressions = list(find_suppressions(context.source, context.path))
    suppressed = {(s.span.line, s.code) for s in suppressions}
    for finding in findings:
        key = (finding.span.line, finding.code)
        if key in suppressed:
            used.add(key)
        else:
            kept.append(finding)
    unused_rule = next((r for r in rules if r.code == UNUSED_SUPPRESSION), None)
    if unused_rule is not None:
        silent = {r.code for r in RULES if r.needs_devices and not context.devices}
        codes = {r.code for r in RULES}
        for suppression in suppressions:
            key = (suppression.span.line, suppression.code)
            if key in used or suppression.code in silent:
                continue
            if suppression.code not in codes:
                why = f"{suppression.code} is not a rule code"
            else:
                why = f"no {suppression.code} finding on this line"
            kept.append(
                unused_rule().finding(
                    suppression.span,
                    f"unused suppression of {suppression.code}: {why}",
                    (("code", suppression.code),),
                )
            )
    severities = {rule.code: settings.severity_of(rule) for rule in rules}
    kept = [replace(f, severity=severities.get(f.code, f.severity)) for f in kept]
    return sorted(kept, key=Finding.sort_key)
