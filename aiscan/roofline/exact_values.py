"""The exact value of an intensity (a `Poly`, a `Quotient`, or a sympy sum of products,
integer powers, `Min`, `Max`, `floor` and `ceiling`) at integer sizes, read in Python's
own rationals.

A path over sizes evaluates a kernel's symbolic intensity at every size of its sweep, and
sympy's `xreplace` rebuilds and re-sorts the whole expression at each one: about a
millisecond a point, and `float` of a large sympy rational goes through mpmath's bit
counts (together, five seconds of CPU in a plot of every fixture). The value is the same
rational, and `float` of it is as correctly rounded; anything else (a fractional power, a
division by zero) is None and left to sympy.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from aiscan.analysis.point_values import NotEvaluated, point_value

__all__ = ["rational_value"]


def rational_value(expr: Any, values: Mapping[Any, int]) -> Fraction | None:
    """`expr` with every symbol set to its integer in `values` (keyed by the expression's
    own symbols), or None where `point_value` cannot read it or a denominator is zero
    there."""
    names = {symbol.name: Fraction(value) for symbol, value in values.items()}
    if len(names) != len(values) or any(s not in values for s in expr.free_symbols):
        # Read by name: only where each symbol is a key (a sympy symbol is its `Poly` of the
        # same name and assumptions) and no two keys share a name.
        return None
    try:
        return point_value(expr, names)
    except (NotEvaluated, ZeroDivisionError):
        return None
