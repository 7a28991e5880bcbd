"""AIS003 numpy-temporaries: eager NumPy evaluation moving more bytes than the fused work."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand
from aiscan.errors import Severity
from aiscan.lint.certainty import surely_positive
from aiscan.lint.context import LintContext
from aiscan.lint.figures import bytes_text, intensity_text
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["NumpyTemporaries"]


class NumpyTemporaries(Rule):
    """## What it does
    Flags a NumPy statement (or run of statements) whose eager evaluation, one ufunc or
    matmul call at a time with a temporary array for every intermediate result, moves more
    bytes than the same work fused into one pass. The message names the temporaries and
    gives both traffic figures and both intensities.

    ## Why is this bad?
    Each intermediate such as `a * x` in `y + a * x` is written to a fresh array and read
    back: for float64 `a*x + y` that is 40n bytes instead of 24n, AI 1/20 instead of 1/12.
    Element-wise NumPy code is memory-bound, so run time grows with those bytes.

    ## Example
    ```python
    y = a * x + y            # eager: temporary for a*x, 40n bytes
    ```
    Use instead: in-place updates (`y += a * x` still has one temporary; `np.multiply(x, a,
    out=tmp); y += tmp` reuses a buffer), or a fusing engine (numexpr, numba, `jax.jit`) that
    reads each input once.

    ## Options
    None.

    ## References
    - NumPy user guide, "Universal functions (ufunc)": the `out` argument.
    - `docs/python.md`: the `fused` and `eager` traffic views.
    """

    code = "AIS003"
    name = "numpy-temporaries"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        write_allocate = context.analysis.write_allocate
        sizes = dict(context.sizes)
        for _, region in context.nests():
            if "eager" not in region.traffic or not region.region.temporaries or region.unknowns:
                continue
            eager = region.traffic["eager"].total(write_allocate)
            fused = region.traffic["fused"].total(write_allocate)
            if not surely_positive(expand(eager - fused), context.sizes):
                continue
            temporaries = region.region.temporaries
            named = ", ".join(
                f"`{t.expression}` ({t.elements} {t.element.name}, line {t.span.line})"
                for t in temporaries
            )
            plural = "y" if len(temporaries) == 1 else "ies"
            message = (
                f"eager NumPy evaluation allocates {len(temporaries)} temporar{plural} "
                f"({named}) and moves {bytes_text(eager)} instead of {bytes_text(fused)} fused"
            )
            eager_ai, fused_ai = region.intensity["eager"].expr, region.intensity["fused"].expr
            if region.flops.total != 0 and eager_ai is not None and fused_ai is not None:
                message += (
                    f"; AI {intensity_text(eager_ai, sizes)} instead of "
                    f"{intensity_text(fused_ai, sizes)}"
                )
            yield self.finding(
                region.region.span,
                message,
                (
                    ("temporaries", str(len(temporaries))),
                    ("bytes eager", str(eager)),
                    ("bytes fused", str(fused)),
                    ("FLOPs", str(region.flops.total)),
                ),
            )
