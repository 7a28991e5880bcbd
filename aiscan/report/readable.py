"""Counts as a person reads them in the text report: factored, and without the terms that
vanish at the sizes that matter.

The JSON keeps the canonical expanded form (`8*nx*ny*nz - 16*nx*ny - ...`, eight terms);
the text writes the same polynomial as its factors (`8*(nx - 2)*(ny - 2)*(nz - 2)`). A
`Max(0, 4 - n)` term (a loop that runs `n - 4` times counted for every n) is zero from
n = 4 on: it is left out there and the condition is stated after the count ("for n >= 4"),
unless a given size is below it, where the term matters and stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aiscan.algebra import (
    SYMPY,
    ZERO,
    Monomial,
    Poly,
    Quotient,
    is_poly,
    is_quotient,
    polynomial_text,
    power_texts,
    to_sympy,
)
from aiscan.ir.symbols import is_size_symbol
from aiscan.report.factored_text import factor_list, product_text, quotient_factors, sum_factors

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["readable"]

MAX_TERMS = 40
"""Larger polynomials are printed as they are: factoring them costs more than it helps."""


def readable(expr: sympy.Expr, sizes: Mapping[str, int] | None = None) -> str:
    """`expr` factored where that is shorter, its vanishing `Max(0, c - n)` terms dropped
    with "(for n >= c)" after it (kept where a given size is below c)."""
    return _readable(expr, tuple(sorted((sizes or {}).items())))


@lru_cache(maxsize=8192)
def _readable(expr: sympy.Expr, sizes: tuple[tuple[str, int], ...]) -> str:
    plain = str(expr)
    if is_poly(expr) or is_quotient(expr):
        decided = _readable_exact(expr, dict(sizes), plain)
        if decided is not None:
            return decided
        expr = to_sympy(expr)  # what is left undecided below is sympy's
    if not isinstance(expr, sympy.Expr) or not expr.free_symbols:
        return plain
    dropped, conditions = _without_vanishing_max(expr, dict(sizes))
    factored = _factored(dropped)
    text = factored if factored is not None else str(dropped)
    if not conditions and factored is None:
        return plain
    return text + _conditions_text(conditions)


def _readable_exact(expr: Poly | Quotient, sizes: Mapping[str, int], plain: str) -> str | None:
    """`_readable`'s text of a Poly or a Quotient, decided on the exact types as the sympy
    path below decides it (`factored_text` factors and prints as `sympy.factor` does);
    None where that needs sympy: a `Max` that stays, a factor not shown irreducible."""
    if isinstance(expr, Poly):
        dropped, conditions = _without_vanishing_hinges(expr, sizes)
        if dropped.hinged:
            return None
        expanded = str(dropped)
        if _sum_factors_at_most(dropped) < 2:
            return expanded + _conditions_text(conditions)
        factored = _poly_factored(dropped, len(expanded))
        if factored is None:
            return plain if not conditions else expanded + _conditions_text(conditions)
    else:
        top, conditions = _without_vanishing_hinges(expr.numerator, sizes)
        bottom, more = _without_vanishing_hinges(expr.denominator, sizes)
        conditions |= more
        if top.hinged or bottom.hinged:
            return None
        if not conditions:
            if _sum_factors_at_most(expr) < 2:
                return plain  # nothing to factor, and no `Max`: sympy stays unimported
            longest = len(plain)
        else:
            # sympy's `expand` writes each term of the top over the bottom, so its text is
            # at least this long (`m*n/(4*m*n - 4*m - 4*n) - 2*m/(4*m*n - 4*m - 4*n) + ...`);
            # where the factored text is not shorter, sympy writes the expanded one, which
            # only sympy writes here.
            bottom_text = polynomial_text(bottom)
            if len(top.terms) < 2 or len(bottom.terms) < 2 or bottom_text is None:
                return None
            longest = sum(len(_monomial_text(m)) + len(bottom_text) + 3 for m in top.terms)
            longest += 3 * (len(top.terms) - 1)
        factored = _quotient_factored(top, bottom, longest)
        if factored is None:
            return None if conditions else plain
    if isinstance(factored, _Undecided):
        return None
    return factored + _conditions_text(conditions)


class _Undecided:
    """The factoring needs sympy."""


_UNDECIDED = _Undecided()


def _poly_factored(poly: Poly, longest: int) -> str | _Undecided | None:
    """`_factored` of a polynomial: `sympy.factor`'s text when it has two factors that are
    sums and is at most `longest` characters (the expanded text's); None when not;
    `_UNDECIDED` for sympy."""
    if len(poly.terms) > MAX_TERMS:
        return _UNDECIDED  # `together` may take a common monomial out, and sympy factor the rest
    factoring = factor_list(poly)
    if factoring is None:
        return _UNDECIDED
    if sum_factors(factoring) < 2:
        return None
    return _shorter(product_text(factoring), longest)


def _quotient_factored(top: Poly, bottom: Poly, longest: int) -> str | _Undecided | None:
    """`_factored` of `top/bottom`: the factored parts' product, as sympy's `Mul`
    evaluates `factor(top)/factor(bottom)`."""
    if len(top.terms) > MAX_TERMS or len(bottom.terms) > MAX_TERMS:
        return _UNDECIDED
    above, below = factor_list(top), factor_list(bottom)
    if above is None or below is None or above[1].keys() & below[1].keys():
        return _UNDECIDED  # a common factor: `together` may cancel it before `factor`
    if sum_factors(above) + sum_factors(below) < 2:
        return None
    return _shorter(product_text(quotient_factors(above, below)), longest)


def _shorter(text: str | None, longest: int) -> str | _Undecided | None:
    """`text` where it is at most `longest` characters (sympy keeps the shorter form)."""
    if text is None:
        return _UNDECIDED
    return text if len(text) <= longest else None


def _monomial_text(monomial: Monomial) -> str:
    """A term's symbols as its text over the bottom starts (`m*n` of `2*m*n/(...)`)."""
    return "*".join(power_texts(monomial)) or "1"


def _conditions_text(conditions: set[tuple[str, int]]) -> str:
    if not conditions:
        return ""
    return " (for " + ", ".join(f"{n} >= {c}" for n, c in sorted(conditions)) + ")"


def _sum_factors_at_most(expr: Any) -> int:
    """At most how many factors that are sums a polynomial (or a quotient of two) of the
    exact type can factor into, decided without sympy. Per part, once its common monomial
    is out: none below two terms; where every symbol has degree at most 1, the factors
    share no symbol, so their term counts multiply: at most the number of prime factors of
    its term count (`4*m*n + 4*m + 8*n`, three terms, is no product of two sums);
    otherwise its degree."""
    parts = (expr.numerator, expr.denominator) if is_quotient(expr) else (expr,)
    bound = 0
    for part in parts:
        if len(part.terms) < 2:
            continue
        rest = part.divided_by_monomial(part.common_monomial(part))
        reduced = [dict(monomial) for monomial in rest.terms]
        if all(power <= 1 for m in reduced for power in m.values()):
            bound += _prime_factors(len(part.terms))
        else:
            bound += max(sum(m.values()) for m in reduced)
    return bound


def _prime_factors(n: int) -> int:
    """How many prime factors `n` has, counted with multiplicity."""
    count, factor = 0, 2
    while factor * factor <= n:
        while n % factor == 0:
            n //= factor
            count += 1
        factor += 1
    return count + (n > 1)


def _without_vanishing_max(
    expr: sympy.Expr, sizes: Mapping[str, int]
) -> tuple[sympy.Expr, set[tuple[str, int]]]:
    """`expr` with each `Max(0, c - n)` (n a size, c an integer) set to 0, and the `(n, c)`
    it holds from; those where a given n is below c are kept."""
    replaced: dict[sympy.Basic, sympy.Expr] = {}
    conditions: set[tuple[str, int]] = set()
    for term in expr.atoms(sympy.Max):
        found = _vanishing_from(term)
        if found is None:
            continue
        name, bound = found
        if name in sizes and sizes[name] < bound:
            continue
        replaced[term] = sympy.Integer(0)
        conditions.add(found)
    if not replaced:
        return expr, set()
    return sympy.expand(expr.xreplace(replaced)), conditions


def _without_vanishing_hinges(
    poly: Poly, sizes: Mapping[str, int]
) -> tuple[Poly, set[tuple[str, int]]]:
    """`_without_vanishing_max` of a Poly's own hinges `Max(0, c - s)`, s a size: each is 0
    from s = c on."""
    replaced: dict[Poly, Poly] = {}
    conditions: set[tuple[str, int]] = set()
    for atom, (bound, name) in poly.hinges().items():
        if name in sizes and sizes[name] < bound:
            continue
        replaced[atom] = ZERO
        conditions.add((name, bound))
    return (poly.without_hinges(replaced) if replaced else poly), conditions


def _vanishing_from(term: sympy.Max) -> tuple[str, int] | None:
    """`("n", 4)` for `Max(0, 4 - n)`: zero for n >= 4; None for other maxima."""
    if len(term.args) != 2 or sympy.Integer(0) not in term.args:
        return None
    (other,) = [a for a in term.args if a != 0]
    symbols = other.free_symbols
    if len(symbols) != 1:
        return None
    (size,) = symbols
    if not is_size_symbol(size):
        return None
    coefficient = other.coeff(size)
    rest = sympy.expand(other - coefficient * size)
    if coefficient != -1 or not rest.is_Integer:
        return None
    return str(size), int(rest)


def _factored(expr: sympy.Expr) -> str | None:
    """The factored text of a polynomial or a quotient of two, when it has two factors
    that are sums and is no longer than the expanded one; None otherwise."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    parts = []
    for part in (numerator, denominator):
        if part.is_number or not part.is_polynomial() or len(sympy.Add.make_args(part)) > MAX_TERMS:
            parts.append(part)
            continue
        parts.append(sympy.factor(part))
    if sum(_sums(p) for p in parts) < 2:
        return None  # `ni*nj*(3*nk + 1)` reads no better than `3*ni*nj*nk + ni*nj`
    factored = parts[0] / parts[1] if parts[1] != 1 else parts[0]
    text = str(factored)
    return text if len(text) <= len(str(expr)) else None


def _sums(part: sympy.Expr) -> int:
    """How many factors of `part` are sums, a power counted by its exponent: a factoring
    worth showing has two (`(n - 2)*(3*n - 2)`, `(n - 2)**2`)."""
    count = 0
    for factor in sympy.Mul.make_args(part):
        base, exponent = factor.as_base_exp()
        if isinstance(base, sympy.Add):
            count += int(exponent) if exponent.is_Integer and exponent > 0 else 1
    return count
