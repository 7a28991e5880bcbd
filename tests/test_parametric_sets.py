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


def _at(references: list[PolyReference], array: str, index: tuple, offset: int, write: bool):
    """`references` with one more, in the loops of the first."""
    access = Access(array, index, FLOAT64, write, Span("t.c", 1, 1), f"{array}[...]")
    loops = references[0].loops if references else (_loop("i", n), _loop("j", m))
    return [*references, PolyReference(access, loops, (0,) * len(loops), 0, offset)]


def _group(*specs: tuple[tuple, bool]) -> tuple[PolyReference, ...]:
    references: list[PolyReference] = []
    for offset, (index, write) in enumerate(specs):
        references = _at(references, "A", index, offset, write)
    return tuple(references)


GROUPS = [
    # (references, sizes held as numbers): one array's references in one i < n, j < m nest
    (_group(((i, j), False), ((j, i), False)), frozenset()),  # reads alone
    (_group(((i, j), False), ((i, j + 1), False), ((i, j), True)), frozenset()),  # a stencil
    (_group(((i + j,), False), ((i,), True)), frozenset()),  # overlapping rows, a store
    (_group(((i * n + j,), False), ((i * n + j,), True)), frozenset({n})),  # linearized
    (_group(((sympy.Mod(i + j, n),), False), ((j,), True)), frozenset({n})),
    (_group(((i + n * m + j,), False)), frozenset({m, n})),  # no parameter left
]


@pytest.mark.parametrize(("references", "numbers"), GROUPS)
def test_counts_from_sets_fixed_at_each_point_are_those_of_the_maps_there(
    references: tuple[PolyReference, ...], numbers: frozenset
) -> None:
    """The touched, written and read-first elements, made once over the sizes that can be
    parameters (per value of the others) and fixed at each point, count what the maps made
    at that point count: the unions and the `lexmin` are no longer made per point."""
    sizes = (m, n)
    polyhedral._parametric_sets.cache_clear()
    for values in product((1, 2, 5, 9), (1, 3, 4, 10)):
        point = tuple(zip(sizes, values, strict=True))
        sets = polyhedral._sets_at(references, point)
        assert (sets is None) == (numbers == {m, n})
        expected = polyhedral._counts_from_maps(references, point)
        assert polyhedral._counts_cached.__wrapped__(references, point) == expected
        assert polyhedral._touched_cached.__wrapped__(references, point) == expected[0]
    # Once over both sizes (None where a map cannot take them), then once per value of n.
    made = polyhedral._parametric_sets.cache_info().currsize
    assert made == {frozenset(): 1, frozenset({n}): 1 + 4, frozenset({m, n}): 1}[numbers]


@pytest.mark.parametrize(("loops", "guards", "parametric"), NESTS)
def test_a_nest_runs_where_its_count_is_one_or_more(
    loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...], parametric: bool
) -> None:
    """`_domain_runs` tests for a point where `_domain_count` counted every point: the same
    answer, at sizes where the nest runs and where it does not (n = 1, m = 0)."""
    sizes = (m, n)
    for values in product((0, 1, 3, 4, 9), (1, 2, 5, 9, 10)):
        at = tuple(zip(sizes, values, strict=True))
        try:
            expected = polyhedral._domain_count(loops, guards, at) >= 1
        except NotAffine:
            with pytest.raises(NotAffine):
                polyhedral._domain_runs(loops, guards, at)
            continue
        assert polyhedral._domain_runs(loops, guards, at) == expected
