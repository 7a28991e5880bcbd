"""Limits at infinity read off leading terms instead of sympy's `limit`
(`intensity.limit_at_infinity`):

* a rounding of `c/x + d` equals one integer for every large x (`_settled_roundings`);
* a ratio of sums of rational multiples of `x**p` and `x**(t*x + p)` has the limit of its
  leading terms, `x**x` outgrowing every power (`_limit_of_growth_terms`).

Each is held to sympy's own limit: on the expressions the fixtures' plot met, and on
random ones.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis import intensity

X = sympy.Symbol("x", positive=True)

MET = [
    # Limits the fixtures' plot (`aiscan roofline fixtures/c fixtures/python`) took with
    # sympy: crossover gaps of a recursion's path and of a tile's count, and intensities.
    "-5373*x**x/67",
    "-320*x**2 + 2*x*x**x - 801*x**x",
    "(2*x*x**x - x**x)/(8*x**2 + 16*x*x**x + 32*x**x)",
    "(2*x*(x - 1) - (x - 1)**2 + 2)/(8*x**2 + 24*x)",
    "-160*x**2 + 2*x*(x - 1) - 1280*x - (x - 1)**2 + 2",
    "(2*x**4 - x)/(8*x**4 + 8*x**3 + 8*x)",
    "-11141120*ceiling(16/x)/67 - 110862336/67",
    "-21693*ceiling(-1/x)/67 - 21693/67",
    "-730144440320*ceiling(4096/x)/67 - 1859961357336576/67",
]

MORE = [
    "x**(x + 1) - x*x**x + 3*x**2",  # two spellings of one growth cancel
    "x**(2*x)/(x**x*x**5)",
    "x**x/x**(x + 1)",
    "floor(3 + 5/x) - x",
    "ceiling(7/2 - 1/x)*x",
    "floor(-2 - 1/x)*x**2 + 5*x**2",
    "(x**2 + 1)/(3*x**2 - x)",
]


@pytest.mark.parametrize("text", MET + MORE)
def test_read_off_as_sympy_takes_it(text: str) -> None:
    expr = sympy.sympify(text, locals={"x": X})
    assert intensity.limit_at_infinity(expr, X) == sympy.limit(expr, X, sympy.oo)


@pytest.mark.parametrize(
    "text",
    [
        "p*x**x + x",  # another symbol
        "sqrt(x) + x",  # a root
        "x**(x/2) - x",  # a fractional tower
        "x**(x**2) + x",
        "floor(x/2) - x**x",  # a rounding that grows
    ],
)
def test_anything_else_is_not_read_as_growth_terms(text: str) -> None:
    expr = sympy.sympify(text, locals={"x": X, "p": sympy.Symbol("p", positive=True)})
    assert intensity._limit_of_growth_terms(expr, X) is None


@pytest.mark.parametrize(
    ("rounding", "value"),
    [
        ("ceiling(16/x)", 1),
        ("ceiling(-1/x)", 0),
        ("floor(16/x)", 0),
        ("floor(-1/x)", -1),
        ("floor(5/2 + 3/x)", 2),
        ("ceiling(5/2 - 3/x)", 3),
        ("ceiling((x + 2)/x)", 2),
    ],
)
def test_a_rounding_of_a_vanishing_part_settles(rounding: str, value: int) -> None:
    expr = sympy.sympify(rounding, locals={"x": X})
    assert intensity._rounding_at_infinity(expr, X) == value
    assert all(expr.subs(X, x) == value for x in (10**3, 10**6 + 1, 10**9))


@pytest.mark.parametrize("rounding", ["floor(x/2)", "ceiling(1/x**2)", "floor(p/x)"])
def test_other_roundings_stay(rounding: str) -> None:
    expr = sympy.sympify(rounding, locals={"x": X, "p": sympy.Symbol("p", positive=True)})
    assert intensity._settled_roundings(expr, X) is expr


_COEFFICIENTS = st.fractions(min_value=-6, max_value=6, max_denominator=3)
_TERMS = st.lists(
    st.tuples(_COEFFICIENTS, st.integers(0, 2), st.integers(-1, 3)), min_size=1, max_size=3
)


def _sum(terms: list[tuple[object, int, int]]) -> sympy.Expr:
    return sympy.Add(*(sympy.Rational(c) * X ** (t * X + p) for c, t, p in terms))


_LARGE_X = 10**4


def _at_large_x(terms: list[tuple[Fraction, int, int]]) -> Fraction:
    """The sum at x = 10**4, exactly."""
    return sum((c * Fraction(_LARGE_X) ** (t * _LARGE_X + p) for c, t, p in terms), Fraction(0))


def _seen_at_large_x(ratio: Fraction, limit: sympy.Expr) -> bool:
    """Is the ratio at x = 10**4 where `limit` says it heads? Such sums differ from their
    leading terms by a factor 1 + O(1/x): within a tenth of a finite limit, and past a
    hundred (a coefficient ratio of at least 1/18 times x) towards an infinite one."""
    if limit == sympy.oo:
        return ratio > 100
    if limit == -sympy.oo:
        return ratio < -100
    return limit.is_Rational and abs(ratio - Fraction(str(limit))) < Fraction(1, 10)


@settings(max_examples=40, deadline=None)
@given(top=_TERMS, bottom=_TERMS)
def test_random_ratios_of_growth_terms_have_sympys_limit(
    top: list[tuple[Fraction, int, int]], bottom: list[tuple[Fraction, int, int]]
) -> None:
    """sympy's `limit` is the oracle, but not always right on towers: it takes
    `(x**x + x**(2*x + 1) + x**(2*x + 2))/(x**(2*x + 2) + 1)` to oo (sympy 1.14), where the
    ratio is 1 + 1/x + ... and heads to 1. Where the two disagree, the ratio itself at a
    large x must side with the rule, and against sympy."""
    expr = _sum(top) / _sum(bottom)
    if expr.free_symbols != {X}:
        return  # a constant: both sides' terms cancelled
    found = intensity._limit_of_growth_terms(expr, X)
    if found is None:
        return  # a side is zero
    expected = sympy.limit(expr, X, sympy.oo)
    if found != expected:
        ratio = _at_large_x(top) / _at_large_x(bottom)
        assert _seen_at_large_x(ratio, found) and not _seen_at_large_x(ratio, expected)


def test_sympys_wrong_limit_on_a_tower_is_not_taken() -> None:
    """The example hypothesis found: the rule reads 1, sympy's `limit` oo."""
    top = [(Fraction(1), 1, 0), (Fraction(1), 2, 1), (Fraction(1), 2, 2)]
    bottom = [(Fraction(1), 0, 0), (Fraction(1), 2, 2)]
    expr = _sum(top) / _sum(bottom)
    assert intensity._limit_of_growth_terms(expr, X) == 1
    assert intensity.limit_at_infinity(expr, X) == 1
    ratio = _at_large_x(top) / _at_large_x(bottom)
    assert _seen_at_large_x(ratio, sympy.S.One) and not _seen_at_large_x(ratio, sympy.oo)
