"""Polynomials in plain symbols read straight off sympy expressions, as coefficient and
monomial pairs.

Most counts aiscan handles are such polynomials (`2*m*n*q`, `n**2/4 - 3*n/2`). sympy's own
conversions (`Poly(expr)`, the printer's term ordering) go through generic machinery that
costs about a millisecond per expression; reading the expression tree directly is enough
for these shapes, and callers fall back to sympy whenever this returns None.
"""

from __future__ import annotations

import sympy

__all__ = ["Monomial", "Term", "term_of", "terms_of"]

Monomial = dict[sympy.Symbol, int]
Term = tuple[sympy.Rational, Monomial]


def term_of(expr: sympy.Expr) -> Term | None:
    """`expr` as a rational coefficient times powers of plain symbols, or None."""
    if isinstance(expr, sympy.Rational):
        return expr, {}
    factors = expr.args if isinstance(expr, sympy.Mul) else (expr,)
    coefficient: sympy.Rational = sympy.Integer(1)
    monomial: Monomial = {}
    for factor in factors:
        if isinstance(factor, sympy.Rational):
            coefficient = factor
        elif type(factor) is sympy.Symbol and factor not in monomial:
            monomial[factor] = 1
        elif (
            isinstance(factor, sympy.Pow)
            and type(factor.base) is sympy.Symbol
            and isinstance(factor.exp, sympy.Integer)
            and factor.exp > 1
            and factor.base not in monomial
        ):
            monomial[factor.base] = int(factor.exp)
        else:
            return None
    return coefficient, monomial


def terms_of(expr: sympy.Expr) -> list[Term] | None:
    """The terms of a polynomial in plain symbols, or None for any other expression."""
    terms = []
    for argument in expr.args if isinstance(expr, sympy.Add) else (expr,):
        term = term_of(argument)
        if term is None:
            return None
        terms.append(term)
    return terms
