"""`sympy.cancel` of a ratio of two polynomials whose generators include function atoms
(`floor(width/heads)`, `ceiling(n/8)`, `Min(A_d0, y_d0 - 1)`), without `sympy.cancel`.

NumPy and PyTorch code divides sizes (`width // heads`), so the counts of its nests are
polynomials in symbols and floors. `sympy.Poly` refuses them (a floor holds a generator),
and the intensity then went through `sympy.cancel`: about 10 ms a ratio, 1.4 s over the
fixtures and 2.9 s over NPBench (issue 33). For these ratios `cancel` comes down to one
polynomial gcd with each atom taken for one more generator: it reads the ratio as two
integer polynomials in its generators (`sring`, ordered by `_sort_gens`), divides both by
their gcd, and turns both signs where the bottom's leading coefficient is negative. That
result is unique (coprime sides, coprime integer contents, a positive leading coefficient),
so the same gcd over sympy's sparse integer polynomials gives it, at about a tenth of the
cost. Each atom is taken as `cancel` reads it (its first steps rewrite inside function
arguments too), so the result holds the very expressions `cancel`'s would. Other functions
(a `Piecewise`, which `cancel` treats apart), symbolic powers (`R**K`) and negative powers
are left to sympy (None).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, to_sympy
from aiscan.analysis.polynomials import Term, cancelled_in_ring, size_function_kinds

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["cancelled_over_atoms"]


def cancelled_over_atoms(
    numerator: sympy.Expr, denominator: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`sympy.fraction(sympy.cancel(numerator/denominator))` for two expanded polynomials
    in symbols and floors, ceilings, `Min`s and `Max`s of them (sympy's, or a `Poly` for
    a side without them), at least one such atom among them; None for any other shape."""
    generators: set[sympy.Expr] = set()
    top_terms = _terms(to_sympy(numerator), generators)
    bottom_terms = _terms(to_sympy(denominator), generators) if top_terms else None
    if not top_terms or not bottom_terms:
        return None
    atoms = [g for g in generators if not g.is_Symbol]
    if not atoms or not all(atom.free_symbols for atom in atoms):
        return None  # (an atom without symbols would be a coefficient to `sympy.Poly`)
    seen = {g: g if g.is_Symbol else _as_cancel_sees(g) for g in generators}
    if len(set(seen.values())) != len(seen):
        return None  # two atoms `cancel` reads as one
    keys = {g: _sort_gens_key(g) for g in seen.values()}
    if len(set(keys.values())) != len(keys):
        return None  # two generators print alike: sympy's order between them is not known
    cancelled = cancelled_in_ring(
        _renamed(top_terms, seen), _renamed(bottom_terms, seen), sorted(keys, key=keys.__getitem__)
    )
    if cancelled is None:
        return None
    top, bottom = cancelled
    fraction: tuple[sympy.Expr, sympy.Expr] = sympy.fraction(top.as_expr() / bottom.as_expr())
    return fraction


def _terms(expr: sympy.Expr, generators: set[sympy.Expr]) -> list[Term] | None:
    """`expr`'s terms, each a rational times positive integer powers of symbols and
    function atoms (added to `generators`); None for any other shape."""
    terms: list[Term] = []
    monomials: set[frozenset[tuple[sympy.Expr, int]]] = set()
    for summand in expr.args if expr.is_Add else (expr,):
        coefficient = sympy.S.One
        powers: dict[sympy.Expr, int] = {}
        for factor in summand.args if summand.is_Mul else (summand,):
            if factor.is_Rational:
                coefficient *= factor
                continue
            base, exponent = (factor.base, factor.exp) if factor.is_Pow else (factor, sympy.S.One)
            if not (exponent.is_Integer and exponent > 0) or base in powers:
                return None  # `1/n`, `R**K`
            if not (base.is_Symbol or isinstance(base, size_function_kinds())):
                return None  # a `Piecewise`, whose `cancel` goes its own way
            powers[base] = int(exponent)
            generators.add(base)
        monomial = frozenset(powers.items())
        if monomial in monomials or coefficient == 0:
            return None  # not an expanded sum
        monomials.add(monomial)
        terms.append((coefficient, powers))
    return terms


def _renamed(terms: list[Term], seen: dict[sympy.Expr, sympy.Expr]) -> list[Term]:
    return [(c, {seen[g]: e for g, e in monomial.items()}) for c, monomial in terms]


@lru_cache(maxsize=1024)
def _as_cancel_sees(atom: sympy.Expr) -> sympy.Expr:
    """`atom` as `cancel`'s generator: it runs `signsimp`, `factor_terms` and `expand`
    over the whole ratio, inside function arguments too, each on its own subexpression."""
    from sympy.simplify.simplify import signsimp

    return sympy.factor_terms(signsimp(atom), radical=True).expand()


@lru_cache(maxsize=1024)
def _sort_gens_key(generator: sympy.Expr) -> tuple[int, str, int]:
    """`sympy.polys.polyutils._sort_gens`' key: the generator's text, a single letter
    before other names, a trailing number as an index."""
    from aiscan.analysis.hinged_cancel import sort_gens_key_of_text

    return sort_gens_key_of_text(str(generator))
