"""The exact value of a count at an integer point, read in Python's own rationals.

The cache model asks sympy for working sets at given sizes, at the worst end of the loops
around them (`cache_model._worst_at_sizes`). Where a tile size or an outer loop's counter
stays free, the answer is no number whatever the loops do, and sympy spent milliseconds
substituting and re-simplifying `Min(bs, n - bs*t)` to say so (a fifth of a plot of every
fixture). Evaluating the same expression at a few points tells that first: a value that
moves with a free symbol means sympy's result keeps that symbol.

Sums, products, quotients, integer powers, `Min`, `Max`, `floor` and `ceiling` are read
(`lattice=False`: the rational functions alone, as a plot's path reads them); anything else
raises `NotEvaluated`, and the caller asks sympy as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from aiscan.algebra import HINGE, Poly, Quotient

__all__ = ["NotEvaluated", "point_value", "symbol_names"]

_BITS = 1 << 24
"""The largest power (in bits) read here (a path's `R**K` is a million bits at 65536)."""


class NotEvaluated(Exception):
    """A part this reading does not evaluate, or a symbol without a value."""


def symbol_names(expr: Any) -> set[str]:
    """The names of `expr`'s free symbols (Poly and sympy symbols alike)."""
    return {s.name for s in expr.free_symbols}


def point_value(expr: Any, values: Mapping[str, Fraction], *, lattice: bool = True) -> Fraction:
    """`expr` with every symbol set to its value in `values` (by name). Raises
    `NotEvaluated` where it cannot, `ZeroDivisionError` where a denominator vanishes."""
    if isinstance(expr, Quotient):
        top = point_value(expr.numerator, values, lattice=lattice)
        return top / point_value(expr.denominator, values, lattice=lattice)
    if isinstance(expr, Poly):
        return _polynomial_value(expr, values, lattice)
    if isinstance(expr, int):
        return Fraction(expr)
    if expr.is_Rational:  # integers included
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Symbol:
        if expr.name not in values:
            raise NotEvaluated(expr.name)
        return values[expr.name]
    if expr.is_Add:
        return sum((point_value(a, values, lattice=lattice) for a in expr.args), Fraction(0))
    if expr.is_Mul:
        product = Fraction(1)
        for factor in expr.args:
            product *= point_value(factor, values, lattice=lattice)
        return product
    if expr.is_Pow:
        # A symbolic exponent at an integer size too (`R**K`: a million bits at 65536,
        # where the float of sympy's rational alone took mpmath a second and a half).
        base = point_value(expr.base, values, lattice=lattice)
        exponent = point_value(expr.exp, values, lattice=lattice)
        if exponent.denominator != 1:
            raise NotEvaluated("a fractional power")
        if abs(exponent.numerator) * max(base.numerator, base.denominator).bit_length() > _BITS:
            raise NotEvaluated("a power too large to read")
        return base**exponent.numerator
    if not lattice:
        raise NotEvaluated(type(expr).__name__)
    return _lattice_value(expr, values)


def _lattice_value(expr: Any, values: Mapping[str, Fraction]) -> Fraction:
    name = type(expr).__name__
    if name in ("Min", "Max"):
        arguments = [point_value(a, values) for a in expr.args]
        return min(arguments) if name == "Min" else max(arguments)
    if name in ("floor", "ceiling") and len(expr.args) == 1:
        value = point_value(expr.args[0], values)
        return Fraction(math.floor(value) if name == "floor" else math.ceil(value))
    raise NotEvaluated(name)


def _polynomial_value(poly: Poly, values: Mapping[str, Fraction], lattice: bool) -> Fraction:
    total = Fraction(0)
    for monomial, coefficient in poly.terms.items():
        term = Fraction(coefficient)
        for (name, kind), power in monomial:
            if kind == HINGE:  # Max(0, argument), from the argument's own symbols
                if not lattice:
                    raise NotEvaluated(str(name))
                value = max(Fraction(0), point_value(name.argument, values))  # type: ignore[attr-defined]
            elif name in values:
                value = values[name]
            else:
                raise NotEvaluated(name)
            term *= value**power
        total += term
    return total
