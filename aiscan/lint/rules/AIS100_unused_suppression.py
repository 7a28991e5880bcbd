"""AIS100 unused-suppression: an `aiscan: ignore[CODE]` comment that suppresses nothing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["UnusedSuppression"]


class UnusedSuppression(Rule):
    """## What it does
    Reports a suppression comment, `// aiscan: ignore[CODE]` in C or `# aiscan:
    ignore[CODE]` in Python, that names a code with no finding on its line, or a code that
    is not a rule. Codes of rules that need a device are not reported when no device is
    configured, since those rules could not run.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line and misleads the reader
    into thinking there is something to suppress. Usually the code changed and the comment
    stayed behind.

    ## Example
    ```c
    for (int i = 0; i < n; i++)
        y[i] = x[i] * 2.0;   // aiscan: ignore[AIS006]   (no division left here)
    ```
    Use instead: delete the comment, or the unused codes in it.

    ## Options
    None.

    ## References
    - ruff's RUF100 (unused `noqa`), the model for this rule.
    """

    code = "AIS100"
    name = "unused-suppression"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        """The checker reports unused suppressions: only it knows what the others found."""
        return iter(())
