"""The elements first touched by a read, as isl counts them (`polyhedral._read_first`:
each element's earliest instance, where that is a read's), equal running the nest and
noting each element's first touch."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sympy

from aiscan.analysis import polyhedral
from aiscan.analysis.polyhedral import PolyReference
from aiscan.frontends.python.dtypes import FLOAT64
from aiscan.ir.nodes import Access, Loop
from aiscan.ir.symbols import loop_symbol, size_symbol
from aiscan.span import Span

n = size_symbol("n")
i, j = loop_symbol("i"), loop_symbol("j")
HERE = Span("t.c", 1, 1)


def _reference(
    array: str, index: sympy.Expr, loops: tuple[Loop, ...], offset: int, write: bool = False
) -> PolyReference:
    access = Access(array, (index,), FLOAT64, write, HERE, f"{array}[{index}]")
    return PolyReference(access, loops, (0,) * len(loops), 0, offset)


def _triangular_solve() -> list[PolyReference]:
    """for i < n: for j < i: x[i] -= x[j] (reads x[i], x[j], then stores x[i])."""
    outer = Loop("i", sympy.Integer(0), 1, n, (), HERE)
    inner = Loop("j", sympy.Integer(0), 1, i, (), HERE)
    loops = (outer, inner)
    return [
        _reference("x", i, loops, 0),
        _reference("x", j, loops, 1),
        _reference("x", i, loops, 2, write=True),
    ]


def _gauss_seidel() -> list[PolyReference]:
    """for 1 <= i < n - 1: a[i] = a[i - 1] + a[i + 1]."""
    loops = (Loop("i", sympy.Integer(1), 1, n - 2, (), HERE),)
    return [
        _reference("a", i - 1, loops, 0),
        _reference("a", i + 1, loops, 1),
        _reference("a", i, loops, 2, write=True),
    ]


def _shifted_store() -> list[PolyReference]:
    """for i < n: a[i + 1] = a[i] (each element but the first is stored before it is read)."""
    loops = (Loop("i", sympy.Integer(0), 1, n, (), HERE),)
    return [_reference("a", i, loops, 0), _reference("a", i + 1, loops, 1, write=True)]


def _run(references: list[PolyReference], size: int) -> int:
    """Each instance in program order, its references in their order: the elements whose
    first touch was a read."""
    first: dict[int, bool] = {}
    loops = references[0].loops
    ordered = sorted(references, key=lambda r: r.offset)

    def visit(level: int, bound: dict[sympy.Symbol, int]) -> None:
        if level == len(loops):
            for reference in ordered:
                element = int(reference.access.index[0].subs(bound))
                first.setdefault(element, not reference.access.is_write)
            return
        loop = loops[level]
        start = int(loop.start.subs(bound))
        for t in range(max(0, int(loop.trip.subs(bound)))):
            visit(level + 1, {**bound, loop_symbol(loop.var): start + loop.step * t})

    visit(0, {n: size})
    return sum(first.values())


@pytest.mark.parametrize("nest", [_triangular_solve, _gauss_seidel, _shifted_store])
def test_first_reads_are_those_of_running_the_nest(
    nest: Callable[[], list[PolyReference]],
) -> None:
    references = nest()
    for size in range(3, 12):
        touched, _, read_first = polyhedral._counts_at(references, {n: size})
        assert read_first == _run(references, size)
        assert polyhedral.touched_at(references, {n: size}) == touched
