"""Lint findings in the compilers' form, one a line: `file:line:col: CODE message`.

Editors' problem matchers (VS Code's `$gcc`, Vim's errorformat) read this form as is.
Files that could not be analyzed are not in it: the CLI prints those on stderr, in the same
form (`input_errors`), and the summary line counts them.
"""

from __future__ import annotations

from aiscan.lint.checker import LintRun
from aiscan.printable import printable
from aiscan.report.lint_summary import Palette, summary_line

__all__ = ["input_errors", "render_concise"]


def input_errors(run: LintRun, palette: Palette | None = None) -> str:
    """Files that could not be analyzed, `file:line:col: error: message`, one a line."""
    paint = (palette or Palette(False)).paint
    return "".join(
        f"{paint('bold', e.span.location())}: {paint('error', 'error')}: {printable(e.message)}\n"
        for e in run.errors
    )


def render_concise(run: LintRun, palette: Palette | None = None) -> str:
    paint = (palette or Palette(False)).paint
    lines = [
        f"{paint('bold', f.span.location())}: "
        f"{paint(f.severity.value, f.code)} {printable(f.message)}\n"
        for f in run.findings
    ]
    return "".join(lines) + summary_line(run) + "\n"
