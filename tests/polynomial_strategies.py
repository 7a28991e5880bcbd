"""Random polynomials in the kinds of symbols aiscan's counts hold, for property tests."""

from __future__ import annotations

from collections.abc import Callable

import sympy
from hypothesis import strategies as st

SYMBOLS = [
    sympy.Symbol(name, integer=True, positive=True) for name in ("n", "m", "N", "k", "nnz")
] + [sympy.Symbol("p_L12"), sympy.Symbol("trip_L3", integer=True, nonnegative=True)]

coefficients = st.fractions(min_value=-50, max_value=50, max_denominator=12)
monomials = st.lists(st.tuples(st.sampled_from(SYMBOLS), st.integers(1, 3)), max_size=3)


@st.composite
def polynomials(draw: st.DrawFn) -> sympy.Expr:
    terms = draw(st.lists(st.tuples(coefficients, monomials), min_size=1, max_size=5))
    total = sympy.Integer(0)
    for coefficient, factors in terms:
        term = sympy.Rational(coefficient.numerator, coefficient.denominator)
        for symbol, power in factors:
            term *= symbol**power
        total += term
    return sympy.expand(total)


@st.composite
def ratios_sharing_a_factor(
    draw: st.DrawFn, sides: Callable[[], st.SearchStrategy[sympy.Expr]] = polynomials
) -> tuple[sympy.Expr, sympy.Expr]:
    """Two expanded polynomials of `sides` that share a third as a factor, for cancelling."""
    top, bottom, common = draw(sides()), draw(sides()), draw(sides())
    return sympy.expand(top * common), sympy.expand(bottom * common)
