"""AIS008 analysis-gap: something the analysis could not derive exactly, said where it is."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aiscan.errors import Severity
from aiscan.ir.nodes import UnknownKind
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["AnalysisGap"]


class AnalysisGap(Rule):
    """## What it does
    Reports, as information, each place where aiscan cannot derive the counts exactly: a
    call to a function it does not know, a loop bound read from data (CSR row pointers),
    an indirect or non-affine index, the fraction of iterations taking a branch, an array
    shape it cannot see. The message says what stands in the figures instead (a named
    symbol such as `p_L26`, or an upper bound).

    ## Why is this bad?
    It is not bad code; it is a limit of what static analysis can know. The figures of
    the nest are then symbolic in the named quantity or an upper bound, and the other
    rules stay silent where they would need the missing fact. Supply it (sizes, a known
    function, a direct index) or accept the bound knowingly.

    ## Example
    ```c
    for (int i = 0; i < n; i++)
        y[i] = black_box(x[i]) + 1.0;   // unknown call: its FLOPs and bytes are not counted
    ```

    ## Options
    None.

    ## References
    - `docs/model.md`: unknowns, named symbols and upper bounds.
    """

    code = "AIS008"
    name = "analysis-gap"
    severity = Severity.NOTE

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        for function in context.analysis.functions:
            for unknown in dict.fromkeys(function.unknowns):
                if unknown.kind is UnknownKind.ATOMIC_CONTENTION:
                    continue  # a defect to act on, not a gap: AIS012 atomic-contention
                details = [("kind", unknown.kind.value)]
                if unknown.symbol:
                    details.append(("stands for it", unknown.symbol))
                yield self.finding(
                    unknown.span, f"{unknown.kind.value}: {unknown.message}", tuple(details)
                )
