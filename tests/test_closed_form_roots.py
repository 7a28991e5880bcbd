"""A crossover gap of degree 1 or 2 has its positive roots written off its coefficients
(issue 33): bisection to the rational root theorem's width took thousands of steps when
the coefficients hold a ridge's large numerator, as jacobi2d's do."""

from __future__ import annotations

from fractions import Fraction

import sympy
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from aiscan.real_roots import positive_rational_roots

# A ridge as placement makes it exact: 121.6 GFLOP/s over 16.29 GB/s.
RIDGE = Fraction(1216, 16290) * 100


def test_jacobi2ds_crossover_gap_has_its_roots_exactly() -> None:
    """(x - 2)*(4*(x - 2) - 8*ridge*(5*x - 8)): the flops' double root at 2 and one more,
    rational, where the hinge has settled (both below the sizes a crossing needs)."""
    x = sympy.Symbol("x")
    ridge = sympy.Rational(RIDGE.numerator, RIDGE.denominator)
    gap = sympy.Poly(sympy.expand((x - 2) * (4 * (x - 2) - 8 * ridge * (5 * x - 8))), x)
    _, integral = gap.clear_denoms()
    coefficients = [int(c) for c in integral.all_coeffs()]
    other = (8 - 64 * RIDGE) / (4 - 40 * RIDGE)
    assert positive_rational_roots(coefficients) == sorted({Fraction(2), other})


@settings(max_examples=200, deadline=None)
@given(
    st.integers(-(10**15), 10**15).filter(bool),
    st.integers(-(10**15), 10**15),
    st.integers(-(10**15), 10**15),
)
def test_a_quadratics_positive_roots_are_sympys(a: int, b: int, c: int) -> None:
    """Irrational positive roots are sympy's to write (None); irrational negative or
    complex ones do not count, as with the Sturm count over (0, oo)."""
    x = sympy.Symbol("x")
    poly = sympy.Poly(a * x**2 + b * x + c, x)
    try:
        roots = poly.real_roots()
    except ValueError:
        # sympy 1.14's factor cache rejects a true factor of some 29-digit discriminants
        # (`124999999984397 is not a prime factor of ...` for 62412*x**2 + 10**15*x +
        # 62412): the oracle fails, not the code under test.
        reject()
    positive = sorted({r for r in roots if r.is_positive}, key=float)
    expected = (
        [Fraction(int(r.p), int(r.q)) for r in positive]
        if all(r.is_Rational for r in positive)
        else None
    )
    assert positive_rational_roots([a, b, c]) == expected


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 10**12),
    st.integers(-(10**12), 10**12),
    st.integers(1, 10**12),
    st.integers(-(10**12), 10**12),
)
def test_a_quadratic_of_rational_factors_has_both_roots(p: int, q: int, r: int, s: int) -> None:
    """(p*x - q)*(r*x - s): its rational roots, large denominators included."""
    coefficients = [p * r, -(p * s + q * r), q * s]
    expected = sorted({root for root in (Fraction(q, p), Fraction(s, r)) if root > 0})
    assert positive_rational_roots(coefficients) == expected
