"""Lint findings in the compilers' form, one a line: `file:line:col: CODE message`.

Editors' problem matchers (VS Code's `$gcc`, Vim's errorformat) read this form as is.
"""

from __future__ import annotations

from aiscan.lint.checker import LintRun

__all__ = ["render_concise"]


def render_concise(run: LintRun) -> str:
    return "".join(f"{f.span.location()}: {f.code} {f.message}\n" for f in run.findings)
