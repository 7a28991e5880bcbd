"""The shape of a lint rule: code, kebab-case name, documentation, options, `check()`.

A rule is one class in one file under `aiscan/lint/rules/`; its docstring, with the fixed
sections What it does / Why is this bad? / Example / Options / References, is the text
`aiscan rule CODE` prints, `docs/lint.md` lists, SARIF carries and the editor shows.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.span import Span

__all__ = ["SECTIONS", "Rule"]

SECTIONS = ("What it does", "Why is this bad?", "Example", "Options", "References")


class Rule:
    """Base of every rule; subclasses set the class variables and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {}
    """Thresholds and their defaults; `[tool.aiscan.thresholds.CODE]` overrides them."""
    needs_devices: ClassVar[bool] = False
    """Silent without a target device; its suppressions are then not reported unused."""

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self, span: Span, message: str, details: tuple[tuple[str, str], ...] = ()
    ) -> Finding:
        return Finding(self.code, self.name, self.severity, span, message, details)

    @classmethod
    def documentation(cls) -> str:
        """The docstring, dedented: the rule's one documentation text."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def section(cls, title: str) -> str:
        """One section's text (without its heading), or '' when absent."""
        heading = f"## {title}"
        lines = cls.documentation().splitlines()
        if heading not in lines:
            return ""
        start = lines.index(heading) + 1
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
        return "\n".join(lines[start:end]).strip()

    @classmethod
    def summary(cls) -> str:
        """The first sentence of What it does, for tables and SARIF's short description."""
        text = " ".join(cls.section("What it does").split())
        return text.split(". ")[0].rstrip(".") + "."

    @classmethod
    def title(cls) -> str:
        """One short sentence from the rule module's first docstring line, for SARIF's
        `shortDescription` and other one-line listings (`summary` can run to 300 characters)."""
        module = sys.modules[cls.__module__].__doc__ or ""
        head = module.strip().splitlines()[0] if module.strip() else ""
        text = head.split(": ", 1)[1] if ": " in head else cls.summary()
        return text[:1].upper() + text[1:]
