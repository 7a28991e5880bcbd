"""The analysis's fast paths for polynomials agree exactly with the sympy they replace."""

from __future__ import annotations

from operator import attrgetter

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from polynomial_strategies import SYMBOLS, polynomials

from aiscan.algebra import to_sympy
from aiscan.analysis.domain import Bounds, _polynomial_sum, sum_over_loop
from aiscan.analysis.intensity import _leading_of_terms, _leading_with_poly, limit_at_infinity
from aiscan.analysis.polynomials import expanded, linear_coefficient, terms_of
from aiscan.ir.symbols import is_size_symbol, loop_symbol


@settings(max_examples=200, deadline=None)
@given(polynomials(), st.sampled_from(SYMBOLS))
def test_linear_coefficient_is_expand_then_coeff(expr: sympy.Expr, var: sympy.Symbol) -> None:
    assert linear_coefficient(expr, var) == sympy.expand(expr).coeff(var)


LOOP_I, LOOP_J = loop_symbol("i"), loop_symbol("j")
N, M = SYMBOLS[:2]
affine = st.builds(
    lambda a, b, c: a * N + b * M + c, st.integers(0, 2), st.integers(0, 1), st.integers(-3, 3)
)


@settings(max_examples=150, deadline=None)
@given(
    summand=st.sampled_from(
        [sympy.Integer(1), LOOP_I, LOOP_I * LOOP_J + N, LOOP_J**2 - 3 * LOOP_I, SYMBOLS[5] * LOOP_J]
    ),
    outer_trip=affine,
    inner_start=st.sampled_from([sympy.Integer(0), LOOP_I, LOOP_I + 1, 2 * LOOP_I - 1]),
    inner_trip=st.sampled_from([N, N - LOOP_I, LOOP_I + 1, M - 2, sympy.Integer(7)]),
    steps=st.tuples(st.sampled_from([1, 2, -1]), st.sampled_from([1, 3, -2])),
)
def test_ring_sum_is_the_expression_sum(
    summand: sympy.Expr,
    outer_trip: sympy.Expr,
    inner_start: sympy.Expr,
    inner_trip: sympy.Expr,
    steps: tuple[int, int],
) -> None:
    bounds = (
        Bounds("i", sympy.Integer(1), steps[0], outer_trip),
        Bounds("j", inner_start, steps[1], inner_trip),
    )
    expected = summand
    for loop in reversed(bounds):
        expected = sum_over_loop(expected, loop)
    assert _polynomial_sum(summand, bounds) == sympy.expand(expected)


def test_non_polynomial_bounds_are_left_to_sympy() -> None:
    bounds = (Bounds("i", sympy.Integer(0), 2, sympy.ceiling(N / 2)),)
    assert _polynomial_sum(sympy.Integer(1), bounds) is None


@settings(max_examples=200, deadline=None)
@given(polynomials())
def test_leading_terms_match_poly(expr: sympy.Expr) -> None:
    sizes = sorted((s for s in expr.free_symbols if is_size_symbol(s)), key=attrgetter("name"))
    if not sizes:
        return
    terms = terms_of(expr)
    assert terms is not None
    assert _leading_of_terms(terms, set(sizes)) == _leading_with_poly(expr, sizes)


@settings(max_examples=200, deadline=None)
@given(polynomials(), polynomials(), st.integers(-3, 3))
def test_expanded_is_expand(first: sympy.Expr, second: sympy.Expr, weight: int) -> None:
    for expr in (first + second, weight * first, first * second, (first + 1) * weight):
        assert expanded(expr) == sympy.expand(expr)


@settings(max_examples=200, deadline=None)
@given(polynomials(), st.sampled_from(SYMBOLS[:2]))
def test_limit_of_a_polynomial_in_one_size_is_sympys(expr: sympy.Expr, size: sympy.Symbol) -> None:
    """`limit_at_infinity` reads a polynomial in the swept size alone off its leading term;
    with other symbols left, or none, it is sympy's `limit` either way."""
    one_size = sympy.expand(expr.subs({s: size for s in expr.free_symbols}))
    for candidate in (one_size, expr):
        assert limit_at_infinity(candidate, size) == sympy.limit(candidate, size, sympy.oo)


width, heads = (sympy.Symbol(name, integer=True, positive=True) for name in ("width", "heads"))
ATOM_FACTORS = [
    N,
    M,
    width,
    heads**-1,
    sympy.floor(width / heads),
    sympy.floor(N / 2 - sympy.Rational(1, 2)),
    sympy.ceiling(M / 8),
    sympy.Min(N, M - 1),
    sympy.Max(0, 4 - N),
    sympy.floor(N * (M + 1) / 3),  # an argument `expand` rewrites: no longer expanded
    N + 1,  # a sum as a factor: no longer expanded
]
atom_terms = st.lists(
    st.tuples(
        st.fractions(min_value=-9, max_value=9, max_denominator=4),
        st.lists(st.tuples(st.sampled_from(ATOM_FACTORS), st.integers(1, 2)), max_size=3),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(atom_terms)
def test_expanded_over_floors_and_clamps_is_expand(terms: list) -> None:
    """Sums of NumPy's counts (`width // heads`, clamped extents) are given back as they
    are only where `expand` would give back the same expression, structurally."""
    expr = sympy.Add(
        *(
            sympy.Mul(sympy.Rational(c.numerator, c.denominator), *(f**p for f, p in factors))
            for c, factors in terms
        )
    )
    assert sympy.srepr(to_sympy(expanded(expr))) == sympy.srepr(sympy.expand(expr))
