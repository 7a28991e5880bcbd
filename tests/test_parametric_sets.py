"""Sets parsed once over the sizes as isl parameters, then fixed at each grid point, are the
sets the text at those sizes gives (`analysis/polyhedral.py`, "sets at fixed sizes");
where the sizes do not enter affinely the text per point is used, as before."""

from __future__ import annotations

from itertools import product

import islpy as isl
import pytest
import sympy

from aiscan.analysis import polyhedral
from aiscan.analysis.domain import Bounds
from aiscan.analysis.isl_text import NotAffine
from aiscan.analysis.polyhedral import (
    PolyReference,
    _domain_count,
    _domain_text,
    _parametric_domain,
)
from aiscan.frontends.python.dtypes import FLOAT64
from aiscan.ir.nodes import Access, Loop
from aiscan.ir.symbols import loop_symbol, size_symbol
from aiscan.span import Span

n, m = size_symbol("n"), size_symbol("m")
i, j = loop_symbol("i"), loop_symbol("j")


def _brute_force(loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...], at: dict) -> int:
    """Runs the nest: every point of `loops` at sizes `at` that satisfies the guards."""

    def points(level: int, bound: dict) -> int:
        if level == len(loops):
            return int(all(bool(g.subs(bound)) for g in guards))
        loop = loops[level]
        start = int(loop.start.subs(bound))
        trip = int(loop.trip.subs(bound))
        return sum(
            points(level + 1, {**bound, loop_symbol(loop.var): start + loop.step * t})
            for t in range(max(0, trip))
        )

    return points(0, dict(at))


NESTS = [
    # (loops, guards, parsed once over the sizes?)
    ((Bounds("i", sympy.Integer(0), 1, n), Bounds("j", i + 1, 1, n - i - 1)), (), True),
    (
        (Bounds("i", sympy.Integer(1), 1, n - 2), Bounds("j", sympy.Integer(0), 2, m)),
        (sympy.Lt(j, i + m - 3),),
        True,
    ),
    ((Bounds("i", sympy.Integer(0), 1, sympy.floor(n / 2)),), (), True),
    ((Bounds("i", sympy.Integer(0), 1, sympy.Min(m, n - 1)),), (sympy.Ne(i, 2),), True),
    # Not affine in the sizes: a size times a loop variable, a size squared, half a size.
    ((Bounds("i", sympy.Integer(0), 1, n), Bounds("j", n * i, 1, m)), (), False),
    ((Bounds("i", sympy.Integer(0), 1, n**2),), (), False),
    ((Bounds("i", sympy.Integer(0), 1, n / 2 + sympy.Rational(1, 2)),), (), False),
]


@pytest.mark.parametrize(("loops", "guards", "parametric"), NESTS)
def test_counts_at_fixed_sizes_equal_the_text_there_and_running_the_nest(
    loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...], parametric: bool
) -> None:
    sizes = (m, n)
    assert (_parametric_domain(loops, guards, sizes) is not None) == parametric
    for values in product((1, 3, 4, 9, 12), (2, 5, 9, 10)):
        at = tuple(zip(sizes, values, strict=True))
        try:
            text = isl.Set(_domain_text(loops, guards, dict(at)))
        except (isl.Error, NotAffine):
            continue  # `n/2 + 1/2` at even n: no integer set, before as now
        expected = int(text.count_val().to_python())
        assert _domain_count(loops, guards, at) == expected
        assert expected == _brute_force(loops, guards, dict(at))


def _reference(index: tuple[sympy.Expr, ...], loops: tuple[Loop, ...]) -> PolyReference:
    access = Access("A", index, FLOAT64, False, Span("t.c", 1, 1), "A[...]")
    return PolyReference(access, loops, (0,) * len(loops), 0, 0)


def _loop(var: str, trip: sympy.Expr) -> Loop:
    return Loop(var, sympy.Integer(0), 1, trip, (), Span("t.c", 1, 1))


@pytest.mark.parametrize(
    ("index", "numbers"),
    [
        ((i * n + j,), {n}),  # linearized: n a number, m a parameter
        ((sympy.floor(i / sympy.floor(n / 4)), j), {n}),  # a head size inside a floor
        ((sympy.Mod(i + j, n),), {n}),
        ((i + n * m + j,), {n, m}),  # a product of sizes: both numbers, no parameter left
    ],
)
def test_a_map_partly_over_parameters_is_the_text_at_every_point(
    index: tuple[sympy.Expr, ...], numbers: set[sympy.Symbol]
) -> None:
    """The sizes isl cannot take as parameters are numbers, the others parameters, and the
    map fixed at each point is the text's there; parsed once per value of the numbers."""
    reference = _reference(index, (_loop("i", n), _loop("j", m)))
    sizes = (m, n)
    assert polyhedral._sizes_as_numbers(reference, sizes) == numbers
    polyhedral._partly_parametric_map.cache_clear()
    for at in product(range(1, 7), range(4, 13, 4)):
        point = tuple(zip(sizes, at, strict=True))
        width = 6
        text = isl.Map(polyhedral._map_text(reference, dict(point), width))
        assert polyhedral._map_at(reference, point, width).is_equal(text)
    parsed = polyhedral._partly_parametric_map.cache_info().currsize
    assert parsed == (3 if numbers == {n} else 0)  # n's three values; none for text alone
