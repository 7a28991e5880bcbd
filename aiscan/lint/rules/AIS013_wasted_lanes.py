"""AIS013 wasted-lanes: a Triton launch whose blocks run many lanes their masks turn off."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.algebra import to_sympy
from aiscan.analysis.intensity import substitute_sizes
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["WastedLanes"]


class WastedLanes(Rule):
    """## What it does
    Flags a Triton launch that, at the given sizes, executes a large share of its
    arithmetic on masked-off lanes: a block much larger than the extent its mask lets in
    (`BLOCK=1024` over rows of 600 elements), or a last block that is mostly empty. The
    share is the launch's executed FLOPs (every lane of every block) against its useful
    FLOPs (the lanes whose loaded inputs are masked in); a launch without arithmetic, or
    one whose masked-in lanes are not counted exactly, is not flagged.

    ## Why is this bad?
    Triton runs every lane of a block whether its mask is on or off: the masked-off lanes
    take issue slots, registers and, for `tl.dot`, tensor-core time, and do nothing
    useful. A 64 x 64 x 32 tiled matmul at M = 100, N = 70, K = 50 executes 2,097,152 FLOPs
    for 700,000 useful ones (67% wasted); `BLOCK=1024` on n = 600 wastes 41% of the lanes.

    ## Example
    ```python
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets, mask=offsets < n)
        ...

    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)   # n = 600: 41% idle
    ```
    Use instead a block no larger than the work (`triton.next_power_of_2(n)` capped at
    the data), a block size that divides the size, or smaller tiles for small matrices
    (an autotune list with small configs).

    ## Options
    - `min-wasted-fraction` (default 0.125): flag when at least this share of the
      executed FLOPs are on masked-off lanes (one lane in eight). `BLOCK=1024` on
      n = 1000 wastes 2.3% and is not flagged by default.

    ## References
    - Triton documentation, `triton.language.load` (`mask`, `other`).
    - docs/triton.md: executed and useful FLOPs.
    """

    code = "AIS013"
    name = "wasted-lanes"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"min-wasted-fraction": 0.125}

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        for function, region in context.nests():
            if not region.region.gpu_launch or region.useful_flops is None:
                continue
            executed = to_sympy(substitute_sizes(region.flops.total, context.sizes))
            useful = to_sympy(substitute_sizes(region.useful_flops.total, context.sizes))
            if not (executed.is_Integer and useful.is_Integer) or executed <= 0:
                continue  # a size not given, or a fraction the masks could not count
            wasted = 1 - useful / executed
            if wasted < options["min-wasted-fraction"]:
                continue
            share = f"{float(wasted):.0%}"
            name = function.function.name
            yield self.finding(
                region.region.span,
                f"{name}: {share} of the FLOPs it executes at the given sizes are on "
                f"masked-off lanes ({int(executed):,} executed, {int(useful):,} "
                "on masked-in lanes): its blocks are larger than the extent their masks let "
                "in; a smaller block, or one that divides the size, wastes less",
                (
                    ("executed FLOPs", str(int(executed))),
                    ("useful FLOPs", str(int(useful))),
                    ("wasted share", share),
                ),
            )
