"""Arithmetic intensity: the exact ratio, its limit as sizes grow, and its value at sizes.

The limit lets every size symbol grow together (n = m = k = t, t -> oo); branch fractions
and unnamed trip counts stay symbolic. No traffic means no finite intensity, said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from aiscan.ir.symbols import is_size_symbol

__all__ = ["Intensity", "intensity", "leading_limit", "substitute_sizes"]

_GROWTH = sympy.Symbol("_aiscan_growth", positive=True)


@dataclass(frozen=True, slots=True)
class Intensity:
    """FLOPs per byte. `expr` is None when the kernel moves no bytes."""

    expr: sympy.Expr | None
    limit: sympy.Expr | None
    value: sympy.Expr | None
    """At the given sizes; None when no sizes were given or no traffic."""

    @property
    def finite(self) -> bool:
        return self.expr is not None


def intensity(
    flops: sympy.Expr, bytes_moved: sympy.Expr, sizes: Mapping[str, int] | None = None
) -> Intensity:
    if sympy.expand(bytes_moved) == 0:
        return Intensity(None, None, None)
    ratio = sympy.factor(sympy.cancel(flops / bytes_moved))
    value = None
    if sizes:
        value = sympy.nsimplify(substitute_sizes(ratio, sizes))
    return Intensity(ratio, leading_limit(ratio), value)


def substitute_sizes(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr:
    bindings = {s: sizes[s.name] for s in expr.free_symbols if s.name in sizes}
    return sympy.simplify(expr.subs(bindings)) if bindings else expr


def leading_limit(expr: sympy.Expr) -> sympy.Expr | None:
    """The limit as every size grows together; None when sympy cannot tell."""
    sizes = [s for s in expr.free_symbols if isinstance(s, sympy.Symbol) and is_size_symbol(s)]
    if not sizes:
        return sympy.simplify(expr)
    grown = expr.subs({s: _GROWTH for s in sizes})
    grown = grown.replace(sympy.ceiling, lambda x: x).replace(sympy.floor, lambda x: x)
    numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(grown)))
    try:
        top = sympy.Poly(numerator, _GROWTH)
        bottom = sympy.Poly(denominator, _GROWTH)
    except sympy.PolynomialError:
        return _sympy_limit(grown)
    if top.degree() < bottom.degree():
        return sympy.Integer(0)
    ratio = sympy.simplify(top.LC() / bottom.LC())
    if top.degree() == bottom.degree():
        return ratio
    sign = sympy.sign(ratio)
    return sympy.oo * sign if sign.is_number else sympy.oo


def _sympy_limit(expr: sympy.Expr) -> sympy.Expr | None:
    try:
        result = sympy.limit(expr, _GROWTH, sympy.oo)
    except (NotImplementedError, ValueError, TypeError):
        return None
    return result if not result.has(sympy.Limit) else None
