"""Intensities in lowest terms: the fast path through sparse polynomials gives exactly the
normal form sympy's `Poly.cancel` gives."""

from __future__ import annotations

import sympy
from hypothesis import assume, given, settings
from polynomial_strategies import SYMBOLS, polynomials

from aiscan.analysis.intensity import _cancelled_polynomials, _cancelled_with_poly, intensity


@settings(max_examples=300, deadline=None)
@given(polynomials(), polynomials(), polynomials())
def test_fast_cancel_matches_poly_cancel(
    top: sympy.Expr, bottom: sympy.Expr, common: sympy.Expr
) -> None:
    numerator, denominator = sympy.expand(top * common), sympy.expand(bottom * common)
    assume(denominator != 0)
    symbols = sorted(numerator.free_symbols | denominator.free_symbols, key=str)
    assume(symbols)
    fast = _cancelled_polynomials(numerator, denominator, symbols)
    assume(fast is not None)
    assert fast == _cancelled_with_poly(numerator, denominator, symbols)


def test_cancelled_intensities_in_their_documented_form() -> None:
    n, m = SYMBOLS[:2]
    p = SYMBOLS[5]
    assert str(intensity(n**2 + 3 * n, 4 * n**2 + 20 * n).expr) == "(n + 3)/(4*n + 20)"
    assert str(intensity(n * p + n, 20 * n).expr) == "(p_L12 + 1)/20"
    assert str(intensity(2 * m * n, 4 * m * n + 4 * m + 4 * n).expr) == "m*n/(2*m*n + 2*m + 2*n)"
    assert intensity(sympy.Integer(0), n + 1).expr == 0
