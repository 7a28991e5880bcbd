"""Run the enabled rules on an analysis, apply suppressions, report the unused ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aiscan.errors import Diagnostic
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.registry import RULES, UNUSED_SUPPRESSION
from aiscan.lint.rule import Rule
from aiscan.lint.settings import LintSettings
from aiscan.lint.suppression import find_suppressions

__all__ = ["LintRun", "check_analysis"]


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


def check_analysis(context: LintContext, settings: LintSettings) -> list[Finding]:
    """The findings for one analyzed file, sorted by position, suppressions applied."""
    rules = settings.enabled_for(context.path)
    findings: list[Finding] = []
    for rule in rules:
        if rule.needs_devices and not context.devices:
            continue
        findings += rule().check(context, settings.options_for(rule))
    findings = list(dict.fromkeys(findings))
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
    return sorted(kept, key=Finding.sort_key)
