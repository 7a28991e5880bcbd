"""Arithmetic intensity: the exact ratio, its limit as sizes grow, and its value at sizes.

The limit lets every size symbol grow together (n = m = k = t, t -> oo); branch fractions
and unnamed trip counts stay symbolic. No traffic means no finite intensity, said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

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
    numerator, denominator = _cancelled(sympy.expand(flops), sympy.expand(bytes_moved))
    if denominator == 1 or numerator.is_number or not isinstance(numerator, sympy.Add):
        ratio = numerator / denominator
    elif denominator.is_number:  # keep (n + 1)/48 rather than n/48 + 1/48
        ratio = sympy.Mul(numerator, sympy.Pow(denominator, -1, evaluate=False), evaluate=False)
    else:
        ratio = numerator / denominator
    value = None
    if sizes:
        value = sympy.nsimplify(substitute_sizes(ratio, sizes))
    return Intensity(ratio, _limit_of_ratio(numerator, denominator), value)


@lru_cache(maxsize=4096)
def _cancelled(numerator: sympy.Expr, denominator: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """numerator/denominator in lowest terms, by polynomial gcd (much faster than cancel)."""
    symbols = sorted(numerator.free_symbols | denominator.free_symbols, key=str)
    if not symbols:
        top, bottom = sympy.fraction(sympy.nsimplify(numerator / denominator))
        return top, bottom
    try:
        top = sympy.Poly(numerator, *symbols, domain="QQ")
        bottom = sympy.Poly(denominator, *symbols, domain="QQ")
    except sympy.PolynomialError:
        top, bottom = sympy.fraction(sympy.cancel(numerator / denominator))
        return top, bottom
    common = sympy.gcd(top, bottom)
    top, bottom = sympy.div(top, common)[0], sympy.div(bottom, common)[0]
    # Make the denominator's leading coefficient positive and integral: n/12, not (1/12)*n/1.
    top_content = _integer_content(top)
    bottom_content = _integer_content(bottom)
    scale = sympy.Rational(top_content) / sympy.Rational(bottom_content)
    top_expr = sympy.expand((top * (1 / sympy.Rational(top_content))).as_expr())
    bottom_expr = sympy.expand((bottom * (1 / sympy.Rational(bottom_content))).as_expr())
    if bottom_expr.is_number:
        scale = scale / bottom_expr
        return sympy.expand(top_expr * scale.p), sympy.Integer(scale.q)
    return sympy.expand(top_expr * scale.p), sympy.expand(bottom_expr * scale.q)


def _integer_content(poly: sympy.Poly) -> sympy.Rational:
    """The positive rational that makes `poly`'s coefficients coprime integers."""
    coefficients = [sympy.Rational(c) for c in poly.coeffs()]
    numerators = [abs(c.p) for c in coefficients]
    denominators = [c.q for c in coefficients]
    return (
        sympy.Rational(sympy.igcd(*numerators), sympy.ilcm(*denominators))
        if len(coefficients) > 1
        else sympy.Rational(abs(coefficients[0].p), coefficients[0].q)
    )


def substitute_sizes(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr:
    bindings = {s: sizes[s.name] for s in expr.free_symbols if s.name in sizes}
    return sympy.simplify(expr.subs(bindings)) if bindings else expr


def leading_limit(expr: sympy.Expr) -> sympy.Expr | None:
    """The limit as every size grows together; None when sympy cannot tell."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    return _limit_of_ratio(numerator, denominator)


def _limit_of_ratio(numerator: sympy.Expr, denominator: sympy.Expr) -> sympy.Expr | None:
    symbols = numerator.free_symbols | denominator.free_symbols
    sizes = [s for s in symbols if isinstance(s, sympy.Symbol) and is_size_symbol(s)]
    if not sizes:
        return sympy.simplify(numerator / denominator)
    growth = {s: _GROWTH for s in sizes}
    grown = [
        e.subs(growth).replace(sympy.ceiling, lambda x: x).replace(sympy.floor, lambda x: x)
        for e in (numerator, denominator)
    ]
    try:
        top = sympy.Poly(grown[0], _GROWTH)
        bottom = sympy.Poly(grown[1], _GROWTH)
    except sympy.PolynomialError:
        return _sympy_limit(grown[0] / grown[1])
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
