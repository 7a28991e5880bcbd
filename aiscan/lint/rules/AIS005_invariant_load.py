"""AIS005 invariant-load: an array element loaded again on every inner iteration."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, as_expression, expand
from aiscan.analysis.flops import executions, executions_over
from aiscan.analysis.walk import Placed
from aiscan.errors import Severity
from aiscan.ir.nodes import Access, Loop
from aiscan.ir.symbols import loop_symbol
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["InvariantLoad"]


class InvariantLoad(Rule):
    """## What it does
    Flags an array read inside the innermost loop whose index does not depend on that
    loop's variable, such as `x[j]` in a loop over `i`: the same element is loaded on
    every iteration. The message gives how many times it is loaded and how many distinct
    elements that is. Loops written in the source only; silent when the loop also stores
    to the same array at an index that moves with the loop (the value may change).

    ## Why is this bad?
    Unless the compiler can prove that no store in the loop aliases the element (in C it
    often cannot without `restrict`), it reloads it every iteration: extra load
    instructions and, under the streaming model, extra bytes. An element that is read and
    written back (`s[i] += ...` in a loop over `j`) is worse: a load and a store per
    iteration where a register would do.

    ## Example
    ```c
    for (j = 0; j < n; j++)
        for (i = 0; i < n; i++)
            y[i] += A[j*n + i] * x[j];   // x[j] loaded n times per value
    ```
    Use instead: `double xj = x[j];` before the inner loop and use `xj` in it.

    ## Options
    None.

    ## References
    - S. S. Muchnick, "Advanced Compiler Design and Implementation", section 13.2
      (loop-invariant code motion) and 20.3 (scalar replacement of array elements), 1997.
    """

    code = "AIS005"
    name = "invariant-load"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        by_loop: dict[int, list[Placed]] = {}
        for _, placed in context.looped_statements(explicit=True):
            by_loop.setdefault(id(placed.loops[-1]), []).append(placed)
        for group in by_loop.values():
            loop = group[0].loops[-1]
            if loop.trip.is_number and loop.trip <= 1:
                continue
            moving = _arrays_stored_moving(group, loop)
            seen: set[tuple[str, str]] = set()
            for placed in group:
                for access in placed.statement.accesses:
                    if access.is_write or not _invariant(access, loop):
                        continue
                    if access.array in moving or (access.array, access.text) in seen:
                        continue
                    seen.add((access.array, access.text))
                    finding = self._finding(access, loop, placed)
                    if finding is not None:
                        yield finding

    def _finding(self, access: Access, loop: Loop, placed: Placed) -> Finding | None:
        """None where hoisting saves nothing: a load under `if (i == j)` in loop j runs
        once per outer pass already."""
        loads = executions(placed)
        # Hoisted before the loop it loads once per pass of the loops around: branches with
        # an index condition (`if (j == i) continue;`) are counted in `loads`, not named
        # here by their internal fraction symbol.
        sides = {
            b.taken_fraction: int(taken) for b, taken in placed.branches if b.guard is not None
        }
        distinct = executions_over(placed.weight.subs(sides), placed.loops[:-1])
        if expand(loads - distinct) == 0:
            return None
        message = (
            f"`{access.text}` does not change in loop {loop.var} (line {loop.span.line}, "
            f"{loop.trip} iterations): loaded {loads} times where {distinct} would do; "
            "keep it in a local variable outside the loop"
        )
        return self.finding(
            access.span,
            message,
            (
                ("reference", access.text),
                ("innermost loop", f"{loop.var} (line {loop.span.line})"),
                ("iterations per value", str(loop.trip)),
                ("loads", str(loads)),
            ),
        )


def _invariant(access: Access, loop: Loop) -> bool:
    if access.index is None:
        return False
    var = loop_symbol(loop.var)
    return not any(var in as_expression(e).free_symbols for e in access.index)


def _arrays_stored_moving(group: list[Placed], loop: Loop) -> set[str]:
    """Arrays the loop stores to at an index that moves with it (or an unknown index)."""
    return {
        access.array
        for placed in group
        for access in placed.statement.accesses
        if access.is_write and not _invariant(access, loop)
    }
