"""Rule documentation rendered from the rules' docstrings: `aiscan rule`, docs/lint.md."""

from __future__ import annotations

from aiscan.errors import Severity
from aiscan.lint.registry import RULES
from aiscan.lint.rule import SECTIONS, Rule

__all__ = ["missing_sections", "rule_markdown", "rules_markdown", "rules_table", "severity_text"]


def severity_text(rule: type[Rule]) -> str:
    """What the rule's default severity means for `aiscan check`'s exit code."""
    if rule.severity is Severity.NOTE:
        return (
            f"Default severity: note (never fails the run: shown as information; "
            f'`fail-on = ["{rule.code}"]` or `--fail-on {rule.code}` makes it fail)'
        )
    return (
        f"Default severity: {rule.severity.value} (fails the run: exit 1; "
        f"`ignore`, `--ignore {rule.code}` or a suppression comment silences it)"
    )


def rule_markdown(rule: type[Rule]) -> str:
    """One rule's page: a title line, then its docstring with the sections demoted a level."""
    body = rule.documentation().replace("\n## ", "\n#### ")
    if body.startswith("## "):
        body = "#### " + body[3:]
    return f"### {rule.code} {rule.name}\n\n{severity_text(rule)}.\n\n{body}\n"


def rules_markdown() -> str:
    """The rule table and every rule's page, the generated part of docs/lint.md."""
    rows = "".join(
        f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | `{rule.name}` | "
        f"{rule.severity.value} | {rule.summary()} |\n"
        for rule in RULES
    )
    table = "| code | name | severity | what it flags |\n|---|---|---|---|\n" + rows
    return table + "\n" + "\n".join(rule_markdown(rule) for rule in RULES)


def rules_table() -> str:
    """`aiscan rule` without a code: one line per rule, code, name, severity and title."""
    rows = [("code", "name", "severity", "what it flags")]
    rows += [(r.code, r.name, r.severity.value, r.title()) for r in RULES]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = (
        [*(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)), row[3]]
        for row in rows
    )
    return "".join("  ".join(cells) + "\n" for cells in lines)


def missing_sections(rule: type[Rule]) -> list[str]:
    """Sections the docstring lacks (a test keeps every rule complete)."""
    return [title for title in SECTIONS if not rule.section(title)]
