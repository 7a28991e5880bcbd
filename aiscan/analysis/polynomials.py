"""Polynomials in plain symbols read straight off sympy expressions, as coefficient and
monomial pairs.

Most counts aiscan handles are such polynomials (`2*m*n*q`, `n**2/4 - 3*n/2`). sympy's own
conversions (`Poly(expr)`, the printer's term ordering) go through generic machinery that
costs about a millisecond per expression; reading the expression tree directly is enough
for these shapes, and callers fall back to sympy whenever this returns None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

from aiscan.algebra import ONE, SYMPY, ZERO, constant, expand, is_poly, normal, symbol, to_sympy

if TYPE_CHECKING:
    import sympy
    from sympy.polys.rings import PolyElement, PolyRing
else:
    sympy = SYMPY


__all__ = [
    "Monomial",
    "Term",
    "cancelled_in_ring",
    "expanded",
    "from_ring",
    "linear_coefficient",
    "ring_over",
    "size_function_kinds",
    "term_of",
    "terms_of",
    "to_ring",
]

Monomial: TypeAlias = "dict[sympy.Symbol, int]"
Term: TypeAlias = "tuple[sympy.Rational, Monomial]"


def term_of(expr: sympy.Expr) -> Term | None:
    """`expr` as a rational coefficient times powers of plain symbols, or None."""
    if is_poly(expr):
        terms = terms_of(expr)
        if not terms:
            return ZERO, {}
        return terms[0] if len(terms) == 1 else None
    if isinstance(expr, sympy.Rational):
        return expr, {}
    factors = expr.args if isinstance(expr, sympy.Mul) else (expr,)
    coefficient: sympy.Rational = ONE
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
    """The terms of a polynomial in plain symbols, or None for any other expression (a
    hinge `Max(0, c - s)` is no plain symbol)."""
    if is_poly(expr):
        if expr.hinged:
            return None
        return [
            (constant(c), {symbol(*var): power for var, power in m}) for m, c in expr.terms.items()
        ]
    terms = []
    for argument in expr.args if isinstance(expr, sympy.Add) else (expr,):
        term = term_of(argument)
        if term is None:
            return None
        terms.append(term)
    return terms


def expanded(expr: sympy.Expr) -> sympy.Expr:
    """`expand(expr)`, skipped when `expr` is already a sum of monomials in plain
    symbols, or in symbols and floors, ceilings, `Min`s and `Max`s of sizes whose
    arguments are expanded (sums of counts usually are, NumPy's with `width // heads`
    too; `expand` would walk them for nothing, and gives them back as they are)."""
    converted = normal(expr)
    if is_poly(converted):
        return converted
    if terms_of(expr) is not None or _expanded_over_atoms(expr):
        return expr
    return expand(expr)


def _expanded_over_atoms(expr: sympy.Expr) -> bool:
    """Whether every term of `expr` is a rational times integer powers of symbols and of
    floors, ceilings, `Min`s and `Max`s with expanded arguments: what `expand` leaves
    as it is (sympy's `Add` combines like terms, and no factor is a sum)."""
    if not isinstance(expr, sympy.Expr):
        return False
    for term in expr.args if expr.is_Add else (expr,):
        for factor in term.args if term.is_Mul else (term,):
            if factor.is_Rational or factor.is_Symbol:
                continue
            base = factor.base if factor.is_Pow and factor.exp.is_Integer else factor
            if not (base.is_Symbol or _is_expanded_atom(base)):
                return False
    return True


@lru_cache(maxsize=4096)
def _is_expanded_atom(expr: sympy.Expr) -> bool:
    return isinstance(expr, size_function_kinds()) and expr.expand() == expr


@lru_cache(maxsize=8192)
def linear_coefficient(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """`expand(expr).coeff(var)`: what multiplies `var` to the first power. Read off
    the terms directly for polynomials (`Expr.coeff` costs ~0.3 ms on a small sum)."""
    if is_poly(expr) and is_poly(var):
        return expr.coeff(var)
    terms = terms_of(expr) if type(var) is sympy.Symbol else None
    if terms is None:
        return expand(expr).coeff(var)
    parts = [
        sympy.Mul(coefficient, *(s**p for s, p in monomial.items() if s != var))
        for coefficient, monomial in terms
        if monomial.get(var) == 1
    ]
    return normal(sympy.Add(*parts))


def ring_over(symbols: Sequence[sympy.Symbol], integers: bool = False) -> PolyRing | None:
    """sympy's sparse polynomials in `symbols` (lex in the given order; function atoms
    such as `floor(width/heads)` may be generators too), with rational or integer
    coefficients; None when two generators print alike (two symbols sharing a name), which
    would make term order and printing ambiguous."""
    return _ring(tuple(symbols), integers)


@lru_cache(maxsize=1024)
def _ring(symbols: tuple[sympy.Symbol, ...], integers: bool) -> PolyRing | None:
    from sympy.polys.domains import QQ, ZZ
    from sympy.polys.orderings import lex
    from sympy.polys.rings import PolyRing

    generators = [to_sympy(s) for s in symbols]
    if len({str(g) for g in generators}) != len(generators):
        return None
    return PolyRing(generators, ZZ if integers else QQ, lex)


def cancelled_in_ring(
    top: list[Term], bottom: list[Term], generators: Sequence[sympy.Expr]
) -> tuple[PolyElement, PolyElement] | None:
    """`top/bottom` over the integers in `generators` (lex in their order), both divided
    by their gcd, the bottom's leading coefficient made positive; None for a zero top, or
    generators that print alike."""
    ring = ring_over(generators, integers=True)
    if ring is None:
        return None
    scale = math.lcm(*(c.q for c, _ in (*top, *bottom)))
    above = ring.dtype(_integer_dict(top, generators, scale))
    below = ring.dtype(_integer_dict(bottom, generators, scale))
    if not above:
        return None
    _, above, below = above.cofactors(below)
    if below.LC < 0:
        above, below = -above, -below
    return above, below


def _integer_dict(
    terms: list[Term], generators: Sequence[sympy.Expr], scale: int
) -> dict[tuple[int, ...], int]:
    return {
        tuple(monomial.get(g, 0) for g in generators): int(coefficient * scale)
        for coefficient, monomial in terms
        if coefficient
    }


@lru_cache(maxsize=1)
def size_function_kinds() -> tuple[type[sympy.Expr], ...]:
    """The functions of sizes counts hold: integer division (`width // heads`) and clamped
    extents (looked up when asked: the daxpy path never imports sympy)."""
    return (sympy.floor, sympy.ceiling, sympy.Min, sympy.Max)


def to_ring(ring: PolyRing, terms: list[Term]) -> PolyElement:
    """The ring element of `terms`, built directly (`from_dict` re-converts every
    coefficient, a visible cost at thousands of sums)."""
    from sympy.polys.domains import QQ

    symbols = ring.symbols
    return ring.dtype({tuple(m.get(s, 0) for s in symbols): QQ(c.p, c.q) for c, m in terms if c})


def from_ring(poly: PolyElement, factor: Fraction = Fraction(1)) -> sympy.Expr:
    """`factor` times a ring element, as an expanded sympy expression."""
    symbols = poly.ring.symbols
    terms = []
    for exponents, coefficient in poly.terms():
        value = Fraction(int(coefficient.numerator), int(coefficient.denominator)) * factor
        factors: list[sympy.Expr] = [sympy.Rational(value.numerator, value.denominator)]
        factors += [s**power for s, power in zip(symbols, exponents, strict=True) if power]
        terms.append(sympy.Mul(*factors))
    return normal(sympy.Add(*terms))
