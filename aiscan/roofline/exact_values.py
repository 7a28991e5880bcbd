"""The exact value of an intensity (a `Poly`, a `Quotient`, or a sympy sum of products and
integer powers) at integer sizes, read in Python's own rationals.

A path over sizes evaluates a kernel's symbolic intensity at every size of its sweep, and
sympy's `xreplace` rebuilds and re-sorts the whole expression at each one: about a
millisecond a point, and `float` of a large sympy rational goes through mpmath's bit
counts (together, five seconds of CPU in a plot of every fixture). The value is the same
rational, and `float` of it is as correctly rounded; anything else (floor, Min, a division
by zero) is None and left to sympy.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from aiscan.algebra import Poly, Quotient

__all__ = ["rational_value"]


class _NotRational(Exception):
    """A part this reading does not evaluate."""


def rational_value(expr: Any, values: Mapping[Any, int]) -> Fraction | None:
    """`expr` with every symbol set to its integer in `values` (keyed by the expression's
    own symbols), or None where it is not a rational function of them or a denominator
    is zero there."""
    try:
        return _value(expr, values)
    except (_NotRational, ZeroDivisionError):
        return None


def _value(expr: Any, values: Mapping[Any, int]) -> Fraction:
    if isinstance(expr, Quotient):
        return _value(expr.numerator, values) / _value(expr.denominator, values)
    if isinstance(expr, Poly):
        return _polynomial_value(expr, values)
    if expr.is_Rational:  # integers included
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Symbol:
        if expr not in values:
            raise _NotRational
        return Fraction(values[expr])
    if expr.is_Add:
        return sum((_value(a, values) for a in expr.args), Fraction(0))
    if expr.is_Mul:
        product = Fraction(1)
        for factor in expr.args:
            product *= _value(factor, values)
        return product
    if expr.is_Pow:
        # A symbolic exponent at an integer size too (`R**K`: a million bits at 65536,
        # where the float of sympy's rational alone took mpmath a second and a half).
        base, exponent = _value(expr.base, values), _value(expr.exp, values)
        if exponent.denominator != 1:
            raise _NotRational
        if abs(exponent.numerator) * max(base.numerator, base.denominator).bit_length() > _BITS:
            raise _NotRational  # left to sympy, as large as before
        return base**exponent.numerator
    raise _NotRational


_BITS = 1 << 24
"""The largest power (in bits) read here."""


def _polynomial_value(poly: Poly, values: Mapping[Any, int]) -> Fraction:
    given = {}
    for symbol, value in values.items():
        var = symbol.var() if isinstance(symbol, Poly) else None
        if var is None:
            raise _NotRational  # a sympy symbol: its kind is sympy's assumptions
        given[var] = value
    total = Fraction(0)
    for monomial, coefficient in poly.terms.items():
        term = Fraction(coefficient)
        for var, power in monomial:
            if var not in given:
                raise _NotRational
            term *= given[var] ** power
        total += term
    return total
