"""AIS004 strided-access: the innermost loop walks an array against its memory order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar

from aiscan.algebra import SYMPY, ZERO, expand, symbol
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


__all__ = ["StridedAccess"]


class StridedAccess(Rule):
    """## What it does
    Flags an array reference whose address jumps by more than one element from one
    iteration of the innermost loop to the next: a non-unit stride in the last (fastest)
    index, such as `B[k*n + j]` in a loop over `k`, or a column-order walk of a
    multi-dimensional array, such as `A[j][i]` in a loop over `j`. The message gives the
    stride and, when another enclosing loop walks the array contiguously, which loop to make
    innermost. Loops written in the source only: vectorized NumPy expressions are left to
    NumPy.

    ## Why is this bad?
    Memory moves in cache lines (64 bytes on most CPUs, 32 to 128 on GPUs). A unit-stride
    walk uses all eight doubles of a line; a stride of `n` doubles uses one and wastes the
    rest, so the real traffic can be up to eight times the compulsory figure, and hardware
    prefetchers and SIMD loads stop helping.

    ## Example
    ```c
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            for (k = 0; k < n; k++)
                sum += A[i*n + k] * B[k*n + j];   // B strides n elements per k
    ```
    Use instead the `i k j` order (accumulate into `C[i*n + j]`), or transpose `B` once.

    ## Options
    - `min-stride` (default 2): smallest constant stride, in elements, that is reported;
      symbolic strides (`n`) are always reported.

    ## References
    - U. Drepper, "What every programmer should know about memory", 2007, section 6.2.
    """

    code = "AIS004"
    name = "strided-access"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"min-stride": 2.0}

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[tuple[int, str]] = set()
        for _, placed in context.looped_statements(explicit=True):
            innermost = placed.loops[-1]
            for access in placed.statement.accesses:
                stride = _stride(access, innermost)
                if stride is None or (access.span.line, access.text) in seen:
                    continue
                if stride.is_number and abs(stride) < options["min-stride"]:
                    continue
                seen.add((access.span.line, access.text))
                yield self.finding(
                    access.span,
                    _message(access, innermost, stride, placed.loops),
                    (
                        ("reference", access.text),
                        ("innermost loop", f"{innermost.var} (line {innermost.span.line})"),
                        *_stride_details(stride, access.element.width_bytes),
                    ),
                )


def _stride(access: Access, loop: Loop) -> sympy.Expr | None:
    """Elements between consecutive iterations of `loop`; None when unit, zero or unsure.

    For a column-order walk (the variable only in an earlier dimension) the stride is the
    product of the trailing extents, from the declaration (`float a[m][n]`: `n` per step of
    the row index); where one is not declared it is returned as the symbol `row`.
    """
    if access.index is None or (loop.trip.is_number and loop.trip <= 1):
        return None
    var = loop_symbol(loop.var)
    *leading, last = (expand(e) for e in access.index)
    coefficient = last.coeff(var) if var in last.free_symbols else ZERO
    if coefficient.free_symbols & _loop_symbols(last):
        return None
    if coefficient != 0:
        stride = expand(coefficient * loop.step)
        return None if abs(stride) == 1 else abs(stride)
    for dimension, expr in enumerate(leading):
        if var in expr.free_symbols:
            return _column_stride(access, dimension, expr.coeff(var) * loop.step)
    return None


def _column_stride(access: Access, dimension: int, step: sympy.Expr) -> sympy.Expr:
    """Elements one step of `dimension`'s index spans: the declared trailing extents."""
    trailing = access.extents[dimension + 1 :]
    if (
        len(trailing) != len(access.index or ()) - dimension - 1
        or any(e is None for e in trailing)
        or step.free_symbols
    ):
        return _ROW
    return abs(sympy.Mul(step, *trailing))


_ROW = symbol("row", "plain")
"""A column walk's stride where a trailing extent is not declared: one row, size unknown."""


def _stride_details(stride: sympy.Expr, width: int) -> tuple[tuple[str, str], ...]:
    if stride == _ROW:
        unknown = "one row (its length is not declared)"
        return (("stride (elements)", unknown), ("stride (bytes)", f"{width} × {unknown}"))
    return (("stride (elements)", str(stride)), ("stride (bytes)", str(stride * width)))


def _column_walk(access: Access, loop: Loop) -> bool:
    if access.index is None:
        return False
    return loop_symbol(loop.var) not in expand(access.index[-1]).free_symbols


def _loop_symbols(expr: sympy.Expr) -> set[sympy.Symbol]:
    return {s for s in expr.free_symbols if getattr(s, "is_Symbol", False) and not s.is_positive}


def _message(access: Access, loop: Loop, stride: sympy.Expr, loops: tuple[Loop, ...]) -> str:
    width = access.element.width_bytes
    if stride == _ROW:
        text = (
            f"`{access.text}` is walked down a column: consecutive iterations of the "
            f"innermost loop {loop.var} (line {loop.span.line}) are one row apart"
        )
    elif _column_walk(access, loop):
        text = (
            f"`{access.text}` is walked down a column: consecutive iterations of the innermost "
            f"loop {loop.var} (line {loop.span.line}) are {stride} elements "
            f"({expand(stride * width)} bytes) apart"
        )
    else:
        text = (
            f"`{access.text}` strides {stride} elements ({expand(stride * width)} bytes) "
            f"per iteration of the innermost loop {loop.var} (line {loop.span.line})"
        )
    better = _contiguous_loop(access, loops[:-1])
    if better is not None:
        text += f"; loop {better.var} (line {better.span.line}) walks it contiguously"
        text += " — make it the innermost loop"
    return text


def _contiguous_loop(access: Access, outer: tuple[Loop, ...]) -> Loop | None:
    if access.index is None:
        return None
    last = expand(access.index[-1])
    for loop in reversed(outer):
        var = loop_symbol(loop.var)
        if var in last.free_symbols and abs(last.coeff(var) * loop.step) == 1:
            return loop
    return None
