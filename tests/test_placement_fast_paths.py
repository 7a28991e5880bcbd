"""The placement's sympy-free paths agree exactly with the sympy they replace (issue 33):
the intensity in `simplify`'s form, its limit, and the cache model's `nroots`."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from polynomial_strategies import SYMBOLS

from aiscan.algebra import as_expression, constant, is_poly, symbol, to_sympy
from aiscan.real_roots import integer_coefficients, numeric_roots, positive_rational_roots
from aiscan.roofline.placement import (
    _intensity_and_limit,
    _limit,
    _positive_roots,
    _rational_limit,
    _simplified,
)

GROWING = [s for s in SYMBOLS if s.name != "p_L12"][:4]
positive = st.fractions(min_value=1, max_value=200, max_denominator=6)
monomial = st.lists(st.tuples(st.sampled_from(GROWING), st.integers(0, 3)), max_size=3)


@st.composite
def sums(draw: st.DrawFn, most: int) -> sympy.Expr:
    total = sympy.Integer(0)
    terms = st.lists(st.tuples(positive, monomial), min_size=1, max_size=most)
    for coefficient, factors in draw(terms):
        term = sympy.Rational(coefficient.numerator, coefficient.denominator)
        for var, power in factors:
            term *= var**power
        total += term
    return sympy.expand(total)


@settings(max_examples=60, deadline=None)  # sympy's simplify takes a second or so
@given(sums(1), sums(5))
def test_a_monomial_over_positive_terms_is_simplify_form(
    flops: sympy.Expr, bytes_: sympy.Expr
) -> None:
    expected = sympy.simplify(flops / bytes_)
    fast = _simplified(as_expression(flops), as_expression(bytes_))
    if fast is None:
        # Left to sympy: a bottom whose terms share a monomial the top does not cancel
        # (`1/(n**3 + n)` stays, `1/(n**2 + n)` is factored: sympy weighs their lengths).
        _, bottom = sympy.fraction(sympy.cancel(flops / bytes_))
        terms = sympy.Add.make_args(sympy.expand(bottom))
        assert len(terms) > 1 and set.intersection(*(t.free_symbols for t in terms))
        return
    assert str(fast) == str(expected)
    assert to_sympy(fast) == expected  # the same sympy object, for code that asks it
    assert str(_intensity_and_limit(as_expression(flops), as_expression(bytes_))[1]) == str(
        _limit(expected)
    )


def test_the_forms_of_the_four_benchmark_kernels() -> None:
    m, n = symbol("m", "size"), symbol("n", "size")
    assert str(_simplified(2 * m * n, 16 * m * n + 128 * n)) == "m/(8*(m + 8))"
    assert str(_simplified(2 * n**3, 72 * n**3 + 128 * n**2)) == "n/(4*(9*n + 16))"
    assert str(_simplified(2 * n, 24 * n**2)) == "1/(12*n)"
    top, bottom = 4 * m * n - 8 * m - 8 * n + 16, 40 * m * n - 80 * m - 80 * n + 160
    assert str(_simplified(top, bottom)) == "1/10"
    assert str(_intensity_and_limit(2 * m * n, 16 * m * n + 128 * n)[1]) == "1/8"
    assert str(_intensity_and_limit(2 * n**3, 32 * n**2)[1]) == "oo"


def test_other_ratios_are_left_to_sympy() -> None:
    n, m = symbol("n", "size"), symbol("m", "size")
    fraction = symbol("p_L3", "fraction")
    assert _simplified(n + 1, 4 * n + 8) is None  # two sums: a gcd, sympy's
    assert _simplified(n, 4 * n - 8) is None  # a sign below
    assert _simplified(fraction * n, 4 * n + 8) is None  # a branch fraction does not grow
    assert is_poly(_simplified(2 * n * m, constant(4)))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(-(10**14), 10**14), min_size=2, max_size=4).filter(lambda c: c[0] != 0),
    st.integers(1, 99),
)
def test_numeric_roots_are_nroots_bit_for_bit(coefficients: list[int], divisor: int) -> None:
    x = sympy.Symbol("x", positive=True)
    degree = len(coefficients) - 1
    expr = sum(c * x ** (degree - k) for k, c in enumerate(coefficients)) / divisor
    integers = integer_coefficients(as_expression(expr), ("x", "positive"))
    assert integers is not None
    try:
        expected = [complex(r) for r in sympy.Poly(expr, x).nroots()]
    except mpmath.mp.NoConvergence:
        with pytest.raises(ArithmeticError):
            numeric_roots(integers)
        return
    assert numeric_roots(integers) == expected


def test_a_linear_root_rounds_twice_as_mpmath_does() -> None:
    """Working sets are mostly linear: 72*x + 64 = 262144 (half of a 512 KiB cache)."""
    x = sympy.Symbol("x", positive=True)
    for lead, last in [(72, 64 - 262144), (3, -1), (7, -(2**52) - 1), (10**15 + 1, -3)]:
        expected = [complex(r) for r in sympy.Poly(lead * x + last, x).nroots()]
        assert numeric_roots([lead, last]) == expected


@settings(max_examples=40, deadline=None)  # sympy's limit takes a tenth of a second or more
@given(
    st.lists(st.integers(-9, 9), min_size=1, max_size=4),
    st.lists(st.integers(-9, 9), min_size=1, max_size=4).filter(any),
)
def test_a_rational_limit_is_sympys_limit(above: list[int], below: list[int]) -> None:
    x = sympy.Symbol("x", positive=True)
    top = sum(c * x**k for k, c in enumerate(above))
    bottom = sum(c * x**k for k, c in enumerate(below))
    expr = top / (bottom + 2 * x ** len(below))  # a bottom that grows, never zero at large x
    assert _rational_limit(expr, x) == sympy.limit(expr, x, sympy.oo)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 9), st.integers(-5, 60)), max_size=3),
    st.tuples(st.integers(-30, 30), st.integers(-50, 50)) | st.none(),
)
def test_positive_rational_roots_are_sympys_real_roots(
    linear: list[tuple[int, int]], quadratic: tuple[int, int] | None
) -> None:
    """Crossover gaps: products of rational factors, with or without a quadratic whose
    roots may be irrational (then sympy's radicals are needed: None)."""
    x = sympy.Symbol("x")
    expr = sympy.Integer(3)
    for a, b in linear:
        expr *= a * x - b
    if quadratic is not None:
        expr *= x**2 + quadratic[0] * x + quadratic[1]
    poly = sympy.Poly(sympy.expand(expr), x)
    positive = sorted({r for r in poly.real_roots() if r.is_positive}, key=float)
    expected = (
        [Fraction(int(r.p), int(r.q)) for r in positive]
        if all(r.is_Rational for r in positive)
        else None
    )
    coefficients = [int(c) for c in poly.all_coeffs()]
    assert positive_rational_roots(coefficients) == expected


def test_a_crossover_with_rational_roots_is_exact_without_sympy() -> None:
    """(x - 1)*(5*x - 42)*x: the gap of a crossover at 42/5, after a root at 1."""
    x = symbol("x", "positive")
    roots = _positive_roots(5 * x**3 - 47 * x**2 + 42 * x, x)
    assert roots is not None
    assert [(str(r.exact), r.value, r.ceiling, r.floor) for r in roots] == [
        ("1", 1.0, 1, 1),
        ("42/5", 8.4, 9, 8),
    ]
    irrational = _positive_roots(x**3 - 2 * x, x)  # left to sympy, which writes radicals
    assert irrational is not None
    assert [str(r.exact) for r in irrational] == ["sqrt(2)"]


def test_a_bottom_with_a_common_monomial_is_left_to_sympy() -> None:
    """Found by the property above: `1/(n**3 + n)` is what `simplify` writes, where the
    fast path wrote `1/(n*(n**2 + 1))`; such bottoms go to sympy."""
    n = GROWING[0]
    assert _simplified(as_expression(sympy.Integer(1)), as_expression(n**3 + n)) is None
    assert _simplified(as_expression(n), as_expression(8 * n + 64)) is not None


_X = to_sympy(symbol("x", "positive"))
_rounding = st.sampled_from([sympy.floor, sympy.ceiling])
_small_rational = st.fractions(min_value=-9, max_value=9, max_denominator=8).map(
    lambda f: sympy.Rational(f.numerator, f.denominator)
)


@st.composite
def _rounded_gaps(draw: st.DrawFn) -> sympy.Expr:
    """A crossover gap's numerator with `x` inside a rounding: `-29*ceiling(x/3 - 2/3)`,
    `-3*ceiling(128/x) - 9`, `x**2*(18*x*floor(x/2 - 1/2) - 80*x**2 - 801)`."""
    inside = draw(_small_rational) * _X + draw(_small_rational)
    if draw(st.booleans()):
        inside = draw(st.integers(1, 64)) / _X
    atom = draw(_rounding)(inside)
    polynomial = sum(draw(_small_rational) * _X**k for k in range(draw(st.integers(0, 2))))
    return sympy.expand(draw(_small_rational) * atom * _X ** draw(st.integers(0, 2)) + polynomial)


@settings(max_examples=40, deadline=None)
@given(_rounded_gaps())
def test_solveset_finds_no_finite_roots_where_the_crossover_skips_it(gap: sympy.Expr) -> None:
    """`_positive_roots` answers None without solveset for `x` inside a floor or ceiling:
    solveset's answer there is never a finite set, which is what None stands for."""
    if not gap.has(_X) or not gap.atoms(sympy.floor, sympy.ceiling):
        return  # evaluated away (`floor(0*x)`): not the case the shortcut takes
    solved = sympy.solveset(gap, _X, domain=sympy.Interval.open(0, sympy.oo))
    assert not isinstance(solved, sympy.FiniteSet)
    assert _positive_roots(gap, _X) is None


def test_an_exponent_of_x_is_no_finite_root_set_either() -> None:
    gap = -320 * _X**2 + 2 * _X * _X**_X - 801 * _X**_X
    solved = sympy.solveset(gap, _X, domain=sympy.Interval.open(0, sympy.oo))
    assert not isinstance(solved, sympy.FiniteSet)
    assert _positive_roots(gap, _X) is None
