"""Rule documentation rendered from the rules' docstrings: `aiscan rule`, docs/lint.md."""

from __future__ import annotations

from aiscan.lint.registry import RULES
from aiscan.lint.rule import SECTIONS, Rule

__all__ = ["missing_sections", "rule_markdown", "rules_markdown"]


def rule_markdown(rule: type[Rule]) -> str:
    """One rule's page: a title line, then its docstring with the sections demoted a level."""
    body = rule.documentation().replace("\n## ", "\n#### ")
    if body.startswith("## "):
        body = "#### " + body[3:]
    return f"### {rule.code} {rule.name}\n\nDefault severity: {rule.severity.value}.\n\n{body}\n"


def rules_markdown() -> str:
    """The rule table and every rule's page, the generated part of docs/lint.md."""
    rows = "".join(
        f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | `{rule.name}` | "
        f"{rule.severity.value} | {rule.summary()} |\n"
        for rule in RULES
    )
    table = "| code | name | severity | what it flags |\n|---|---|---|---|\n" + rows
    return table + "\n" + "\n".join(rule_markdown(rule) for rule in RULES)


def missing_sections(rule: type[Rule]) -> list[str]:
    """Sections the docstring lacks (a test keeps every rule complete)."""
    return [title for title in SECTIONS if not rule.section(title)]
