"""Trip counts as loops run them: never below zero.

A loop's closed-form trip (`n - 5` for `i < n - 5`) goes negative where the loop does not
run, and every count multiplied by it would too (`i < -5` once counted -5 FLOPs and -80
streaming bytes, issue 35). Both frontends pass their trips through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["never_below_zero"]


def never_below_zero(trip: sympy.Expr) -> sympy.Expr:
    """`trip`, or 0 where it is at most 0 at every size (`-5`, `n - 5 - n`, `-n`: the
    loop never runs). A trip whose sign depends on the sizes (`n - 5`) stays as it is:
    its counts hold where it runs, and the analysis drops the loop at given sizes where
    it does not (`analysis.idle_loops`)."""
    return ZERO if trip.is_nonpositive is True else trip
