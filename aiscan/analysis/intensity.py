"""Arithmetic intensity: the exact ratio, its limit as sizes grow, and its value at sizes.

The limit lets every size symbol grow together (n = m = k = t, t -> oo); branch fractions
and unnamed trip counts stay symbolic. No traffic means no finite intensity, said so.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from aiscan.algebra import (
    INFINITY,
    ONE,
    SYMPY,
    ZERO,
    Poly,
    Quotient,
    as_expression,
    expand,
    is_infinity,
    is_poly,
    normal,
    symbol,
    to_sympy,
)
from aiscan.analysis.atom_cancel import cancelled_over_atoms
from aiscan.analysis.hinged_cancel import cancelled_hinged, cancelled_sums, coprime_contents
from aiscan.analysis.polynomials import Term, cancelled_in_ring, from_ring, terms_of
from aiscan.ir.symbols import is_size_symbol
from aiscan.substitution import substituted

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "Intensity",
    "cancelled_by_monomial",
    "finite_value",
    "intensity",
    "leading_limit",
    "limit_at_infinity",
    "past_bends",
    "settled_hinges",
    "substitute_sizes",
]

_GROWTH = symbol("_aiscan_growth", "positive")


@dataclass(frozen=True, slots=True)
class Intensity:
    """FLOPs per byte. `expr` is None when the kernel moves no bytes."""

    expr: sympy.Expr | None
    limit: sympy.Expr | None
    value: sympy.Expr | None
    """At the given sizes; None when none of them appears, or there is no traffic."""

    @property
    def finite(self) -> bool:
        return self.expr is not None


def intensity(
    flops: sympy.Expr, bytes_moved: sympy.Expr, sizes: Mapping[str, int] | None = None
) -> Intensity:
    return _intensity(flops, bytes_moved, tuple(sorted((sizes or {}).items())))


@lru_cache(maxsize=8192)
def _intensity(
    flops: sympy.Expr, bytes_moved: sympy.Expr, size_items: tuple[tuple[str, int], ...]
) -> Intensity:
    """Memoized: a function of one nest has that nest's counts, and kernels recur."""
    sizes = dict(size_items)
    if expand(bytes_moved) == 0:
        return Intensity(None, None, None)
    numerator, denominator = _cancelled(expand(flops), expand(bytes_moved))
    if is_poly(numerator) and is_poly(denominator):
        ratio = _poly_ratio(numerator, denominator)
    elif denominator == 1 or numerator.is_number or not _is_sum(numerator):
        ratio = numerator / denominator
    elif denominator.is_number:  # keep (n + 1)/48 rather than n/48 + 1/48
        ratio = sympy.Mul(numerator, sympy.Pow(denominator, -1, evaluate=False), evaluate=False)
    else:
        ratio = numerator / denominator
    value = None
    if sizes and any(s.name in sizes for s in ratio.free_symbols):
        value = substitute_sizes(ratio, sizes)
        # A relational sympy cannot decide (a DiracDelta, say) leaves the value as it is.
        with contextlib.suppress(TypeError):
            value = value if is_poly(value) else sympy.nsimplify(value)
    return Intensity(ratio, _limit_of_ratio(numerator, denominator), value)


def _poly_ratio(numerator: Poly, denominator: Poly) -> Poly | Quotient:
    """The cancelled ratio of two polynomials: a Poly where it is one (over a number, a
    monomial over a monomial that divides it), else a `Quotient`, which is the sympy
    expression the branches above build, kept without sympy."""
    if denominator == 1 or len(numerator.terms) <= 1:
        monomials = len(numerator.terms) == len(denominator.terms) == 1
        if denominator.is_number or (monomials and _divides(denominator, numerator)):
            return numerator / denominator  # type: ignore[no-any-return]
    return Quotient(numerator, denominator)


def _divides(monomial: Poly, other: Poly) -> bool:
    """Whether one monomial's symbols divide another's (so their quotient is a Poly)."""
    ((powers, _),), ((others, _),) = monomial.terms.items(), other.terms.items()
    mine = dict(others)
    return all(mine.get(var, 0) >= power for var, power in powers)


def _is_sum(expr: sympy.Expr) -> bool:
    return len(expr.terms) > 1 if is_poly(expr) else isinstance(expr, sympy.Add)


@lru_cache(maxsize=4096)
def _cancelled(numerator: sympy.Expr, denominator: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """numerator/denominator in lowest terms with coprime integer coefficients and a
    positive leading denominator coefficient: `n/12`, `(n + 1)/48`, `(2*N - 1)/(4*N + 2)`."""
    if is_poly(numerator) and is_poly(denominator):
        if numerator.hinged or denominator.hinged:
            sizes = [s for s in numerator.free_symbols | denominator.free_symbols]
            hinged = cancelled_hinged(
                numerator, denominator, lambda bottom: _grows_negative_poly(bottom, sizes)
            )
            if hinged is not None:
                return hinged
        else:
            fast = cancelled_by_monomial(numerator, denominator) or cancelled_sums(
                numerator, denominator
            )
            if fast is not None:
                return fast
    symbols = sorted(numerator.free_symbols | denominator.free_symbols, key=attrgetter("name"))
    if not symbols:
        top, bottom = sympy.fraction(sympy.nsimplify(numerator / denominator))
        return top, bottom
    if not numerator.is_Add and not denominator.is_Add:
        # Monomials (2*n over 24*n, 2*n**3 over 32*n**2): sympy's own product rules
        # already cancel them exactly, without building polynomials.
        top, bottom = sympy.fraction(numerator / denominator)
        return top, bottom
    fast = _cancelled_polynomials(numerator, denominator, symbols)
    return fast if fast is not None else _cancelled_with_poly(numerator, denominator, symbols)


def cancelled_by_monomial(numerator: Poly, denominator: Poly) -> tuple[Poly, Poly] | None:
    """`_cancelled` where one side is a monomial (or a number): its common factor with the
    other is a monomial, so no polynomial gcd is needed. The same normal form: coprime
    integer coefficients, a bottom whose leading coefficient (lex in the symbols' names) is
    positive. None for two sums, or two symbols of one name."""
    if min(len(numerator.terms), len(denominator.terms)) > 1 or not denominator.terms:
        return None
    if not numerator.terms:
        return ZERO, ONE
    if numerator.has_name_clash(denominator):
        return None
    common = numerator.common_monomial(denominator)
    top, bottom = numerator.divided_by_monomial(common), denominator.divided_by_monomial(common)
    if bottom.leading_coefficient() < 0:
        top, bottom = -top, -bottom
    return coprime_contents(top, bottom)


def _cancelled_with_poly(
    numerator: sympy.Expr, denominator: sympy.Expr, symbols: list[sympy.Symbol]
) -> tuple[sympy.Expr, sympy.Expr]:
    # A floor of sizes (`width // heads`), or a `Min` or `Max` of them (bytes exact at small
    # sizes), is no polynomial generator over QQ: `sympy.cancel`'s result decides (its gcd
    # with each atom one more generator, `cancelled_over_atoms`, where the atoms allow), and
    # the bottom is kept with a positive sign as below (not `(-n - 3)/(-12*n - 16)`).
    over_atoms = cancelled_over_atoms(numerator, denominator)
    if over_atoms is None:
        try:
            top = sympy.Poly(numerator, *symbols, domain="QQ")
            bottom = sympy.Poly(denominator, *symbols, domain="QQ")
        except sympy.PolynomialError:
            over_atoms = sympy.fraction(sympy.cancel(numerator / denominator))
    if over_atoms is not None:
        top_expr, bottom_expr = over_atoms
        if _grows_negative(bottom_expr, symbols):
            top_expr, bottom_expr = expand(-top_expr), expand(-bottom_expr)
        return top_expr, bottom_expr
    coefficient, top, bottom = top.cancel(bottom, include=False)
    top_scale, top = (top * coefficient).clear_denoms(convert=True)
    bottom_scale, bottom = bottom.clear_denoms(convert=True)
    top_content, top = top.primitive()
    bottom_content, bottom = bottom.primitive()
    scale = sympy.Rational(top_content * bottom_scale, bottom_content * top_scale)
    if bottom.LC() < 0:
        scale, bottom = -scale, -bottom
    return (
        expand(scale.p * top.as_expr()),
        expand(scale.q * bottom.as_expr()),
    )


def _grows_negative(expr: sympy.Expr, symbols: list[sympy.Symbol]) -> bool:
    """Whether `expr` is negative once the sizes have grown (its leading coefficient)."""
    sizes = [s for s in symbols if is_size_symbol(s)]
    if any(
        atom.free_symbols.intersection(sizes) for atom in expr.atoms(sympy.floor, sympy.ceiling)
    ):
        return False  # no leading term: `_leading` reads no polynomial in the sizes there
    leading = _leading(past_bends(expr, sizes), sizes) if sizes else None
    return leading is not None and bool(leading[1].is_negative)


def _grows_negative_poly(expr: Poly, symbols: list[Poly]) -> bool:
    """`_grows_negative` of a Poly, its hinges settled by `past_bends`."""
    sizes = [s for s in symbols if is_size_symbol(s)]
    leading = _leading_of_poly(past_bends(expr, sizes), sizes) if sizes else None
    return leading is not None and bool(leading[1].is_negative)


def _cancelled_polynomials(
    numerator: sympy.Expr, denominator: sympy.Expr, symbols: list[sympy.Symbol]
) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`_cancelled` for two sums, through sympy's sparse integer polynomials and their gcd
    (about a tenth of the cost of building `sympy.Poly`s); None for anything else.

    The result is the one normal form `_cancelled` promises: the bottom is `q` times a
    primitive polynomial whose leading coefficient (lex order in `symbols`) is positive,
    and the top is `p` times a primitive polynomial, with `p/q` in lowest terms.
    """
    top_terms, bottom_terms = terms_of(numerator), terms_of(denominator)
    if top_terms is None or bottom_terms is None:
        return None
    # (A monomial side is `cancelled_by_monomial`'s.)
    cancelled = cancelled_in_ring(top_terms, bottom_terms, symbols)
    if cancelled is None:
        return None
    top, bottom = cancelled
    top_content, bottom_content = top.content(), bottom.content()
    ratio = Fraction(int(top_content), int(bottom_content))
    return (
        from_ring(top, Fraction(ratio.numerator, int(top_content))),
        from_ring(bottom, Fraction(ratio.denominator, int(bottom_content))),
    )


def size_bindings(expr: sympy.Expr, sizes: Mapping[str, int] | None) -> dict[sympy.Basic, int]:
    """The values `sizes` gives to `expr`'s symbols, by symbol (for `subs`)."""
    if not sizes:
        return {}
    return {s: sizes[s.name] for s in expr.free_symbols if s.name in sizes}


def substitute_sizes(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr:
    bindings = size_bindings(expr, sizes)
    if not bindings:
        return expr
    bound = substituted(expr, bindings)
    if is_poly(bound) and bound.is_number:
        return bound  # a rational is as simple as `simplify` makes it
    try:
        return sympy.simplify(bound)
    except TypeError:  # a relational sympy cannot decide inside simplify (e.g. a DiracDelta)
        return bound


def leading_limit(expr: sympy.Expr) -> sympy.Expr | None:
    """The limit as every size grows together; None when sympy cannot tell."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    return _limit_of_ratio(numerator, denominator)


@lru_cache(maxsize=4096)
def _limit_of_ratio(numerator: sympy.Expr, denominator: sympy.Expr) -> sympy.Expr | None:
    symbols = numerator.free_symbols | denominator.free_symbols
    sizes = sorted(
        (s for s in symbols if getattr(s, "is_Symbol", False) and is_size_symbol(s)),
        key=attrgetter("name"),
    )
    if not sizes:
        return numerator / denominator  # already in lowest terms (see _cancelled)
    if is_poly(numerator) and is_poly(denominator):
        # A hinge `Max(0, 4 - n)` is 0 once n passes 4: no term of the limit.
        numerator, denominator = (past_bends(e, sizes) for e in (numerator, denominator))
        return _limit_of_polynomials(numerator, denominator, sizes)
    if numerator.has(sympy.ceiling, sympy.floor) or denominator.has(sympy.ceiling, sympy.floor):
        # They differ from their argument by less than one: same limit.
        numerator = numerator.replace(sympy.ceiling, lambda x: x).replace(sympy.floor, lambda x: x)
        denominator = denominator.replace(sympy.ceiling, lambda x: x).replace(
            sympy.floor, lambda x: x
        )
    if any(e.has(sympy.Max, sympy.Min) for e in (numerator, denominator)):
        # `Max(0, 2 - n)` (a footprint exact at small sizes) is 0 once n passes 2.
        numerator, denominator = (past_bends(e, sizes) for e in (numerator, denominator))
    top = _leading(numerator, sizes)
    bottom = _leading(denominator, sizes)
    if top is None or bottom is None:
        return _limit_by_growth(numerator, denominator, sizes)
    return _limit_of_leading(top, bottom)


def _limit_of_polynomials(
    numerator: Poly, denominator: Poly, sizes: list[Poly]
) -> sympy.Expr | None:
    """`_limit_of_ratio` of two polynomials, read off their leading terms with all sizes
    equal; sympy only for an unbounded limit (`oo`) or coefficients with other symbols."""
    top = _leading_of_poly(numerator, sizes)
    bottom = _leading_of_poly(denominator, sizes)
    if top is None or bottom is None:
        return _limit_by_growth(numerator, denominator, sizes)
    return _limit_of_leading(top, bottom)


def _limit_by_growth(numerator: Any, denominator: Any, sizes: list[Any]) -> sympy.Expr | None:
    """The limit with every size replaced by one growing symbol: read off the two sides'
    leading terms where each is then a sum of rational multiples of its powers (a size
    in a denominator, `width/heads`, made the ratio no polynomial one), else sympy's
    `limit` (tens of milliseconds a ratio: a tenth of a hover on attention code)."""
    growth = {s: _GROWTH for s in sizes}
    top, bottom = numerator.subs(growth), denominator.subs(growth)
    if not (is_poly(top) or is_poly(bottom)):  # a Poly's own limit keeps its own type
        leading = _leading_power(top), _leading_power(bottom)
        if leading[0] is not None and leading[1] is not None:
            return _limit_of_powers(leading[0], leading[1])
    return limit_at_infinity(top / bottom, _GROWTH)


def _leading_power(expr: Any) -> tuple[_Growth, sympy.Rational] | None:
    """The leading term of `expr` in the growth symbol, where `expr` is a sum of rational
    multiples of its powers, negative ones included, and of its powers of itself
    (`_growth_terms`); None otherwise (another symbol, a hinge, a root, zero)."""
    if not isinstance(expr, sympy.Expr):
        return None
    return _leading_growth_term(expr, as_expression(_GROWTH))


_Growth = tuple[int, int]
"""A term's growth, `x**(t*x) * x**p` as (t, p): of two terms, the one with the larger
pair (compared as tuples) grows faster, since `x**x` outgrows every power of `x`."""


def _leading_growth_term(expr: sympy.Expr, variable: Any) -> tuple[_Growth, sympy.Rational] | None:
    """The fastest-growing term of `_growth_terms` with a nonzero coefficient (terms of
    the same growth summed first, `2*x*x**x - 2*x**(x + 1)` cancelling); None where
    `expr` is not such a sum or is zero."""
    terms = _growth_terms(expr, variable)
    if terms is None:
        return None
    nonzero = [(growth, coefficient) for growth, coefficient in terms.items() if coefficient != 0]
    return max(nonzero, key=lambda term: term[0]) if nonzero else None


def _growth_terms(expr: sympy.Expr, variable: Any) -> dict[_Growth, sympy.Rational] | None:
    """`expr` as rational coefficients by growth (`_Growth`), where each of its terms is a
    rational times powers of `variable` with integer exponents or exponents
    `t*variable + p` (t a positive integer, p an integer); None for anything else."""
    terms: dict[_Growth, sympy.Rational] = {}
    for term in expr.args if expr.is_Add else (expr,):
        coefficient, tower, power = sympy.S.One, 0, 0
        for factor in term.args if term.is_Mul else (term,):
            if factor.is_Rational:
                coefficient = coefficient * factor
                continue
            growth = _growth_of_factor(factor, variable)
            if growth is None:
                return None
            tower, power = tower + growth[0], power + growth[1]
        terms[tower, power] = terms.get((tower, power), sympy.S.Zero) + coefficient
    return terms


def _growth_of_factor(factor: sympy.Expr, variable: Any) -> _Growth | None:
    if factor == variable:
        return 0, 1
    if not (factor.is_Pow and factor.base == variable):
        return None
    exponent = factor.exp
    if exponent.is_Integer:
        return 0, int(exponent)
    tower, power = exponent.as_independent(variable, as_Add=True)[::-1]
    times = tower / variable
    if power.is_Integer and times.is_Integer and times > 0:
        return int(times), int(power)
    return None


def _limit_of_powers(
    top: tuple[_Growth, sympy.Rational], bottom: tuple[_Growth, sympy.Rational]
) -> sympy.Expr:
    """What sympy's `limit` gives for such a ratio: 0, the coefficients' ratio, or an
    infinity of the ratio's sign. `_limit_of_leading` reads polynomials the same way but
    answers in aiscan's types (`ZERO`, `INFINITY`); these ratios got sympy's from `limit`,
    and keep them (reports print and compare them as before)."""
    (top_power, top_coefficient), (bottom_power, bottom_coefficient) = top, bottom
    ratio = top_coefficient / bottom_coefficient
    if top_power < bottom_power:
        return sympy.S.Zero
    if top_power == bottom_power:
        return ratio
    return sympy.oo if ratio > 0 else -sympy.oo


def _limit_of_leading(top: tuple[int, Any], bottom: tuple[int, Any]) -> sympy.Expr:
    """The limit of a ratio from its two leading terms (degree, coefficient): 0, their
    coefficients' ratio, or an infinity with its sign (sympy only for a symbolic sign)."""
    (top_degree, top_coefficient), (bottom_degree, bottom_coefficient) = top, bottom
    if top_degree < bottom_degree:
        return ZERO
    ratio = top_coefficient / bottom_coefficient
    if not ratio.is_number:
        ratio = sympy.cancel(ratio)
    if top_degree == bottom_degree:
        return ratio
    if is_poly(ratio) and ratio.is_number and ratio > 0:
        return INFINITY  # sympy's `oo * sign(ratio)`, without sympy
    sign = sympy.sign(ratio)
    return sympy.oo * sign if sign.is_number else sympy.oo


def _leading_of_poly(poly: Poly, sizes: list[Poly]) -> tuple[int, Poly] | None:
    """`_leading_of_terms` on a Poly's own terms: the total degree in the sizes and the
    sum of the terms of that degree with the sizes set to 1."""
    if not poly.terms:
        return None
    names = {size.var() for size in sizes}
    degrees = {
        monomial: sum(power for var, power in monomial if var in names) for monomial in poly.terms
    }
    degree = max(degrees.values())
    coefficient: dict[tuple[tuple[tuple[str, str], int], ...], int | Fraction] = {}
    for monomial, value in poly.terms.items():
        if degrees[monomial] == degree:
            rest = tuple(pair for pair in monomial if pair[0] not in names)
            total = coefficient.get(rest, 0) + value
            if total:
                coefficient[rest] = total.numerator if total.denominator == 1 else total
            else:
                del coefficient[rest]
    if not coefficient:
        return None
    return degree, Poly(coefficient)


def past_bends(expr: sympy.Expr, sizes: list[sympy.Symbol]) -> sympy.Expr:
    """`expr` with each two-sided `Max(a, b)` or `Min(a, b)` replaced by the side that wins
    once the sizes have grown, where `a - b` grows without bound with them (`Max(0, 2 - n)`,
    a small-size correction, is 0 past n = 2; `Min(1, n - 1)` is 1 past n = 2)."""
    if is_poly(expr):
        return _settled_poly_hinges(expr, sizes)
    growth = {s: _GROWTH for s in sizes}

    def settled(largest: bool) -> Callable[..., sympy.Expr]:
        def choose(*args: sympy.Expr) -> sympy.Expr:
            if len(args) == 2:
                gap = expand((args[0] - args[1]).subs(growth))
                if gap.is_polynomial(_GROWTH) and sympy.degree(gap, _GROWTH) > 0:
                    leading = sympy.Poly(gap, _GROWTH).LC()
                    if leading.is_positive or leading.is_negative:
                        first_wins = bool(leading.is_positive) == largest
                        return args[0] if first_wins else args[1]
            return (sympy.Max if largest else sympy.Min)(*args)

        return choose

    settled_max = expr.replace(sympy.Max, settled(largest=True))
    return expand(settled_max.replace(sympy.Min, settled(largest=False)))


def _leading(expr: sympy.Expr, sizes: list[sympy.Symbol]) -> tuple[int, sympy.Expr] | None:
    """Total degree in the sizes and the coefficient of that degree with all sizes equal."""
    terms = terms_of(expr)
    if terms is not None:
        return _leading_of_terms(terms, set(sizes))
    return _leading_with_poly(expr, sizes)


def _leading_with_poly(
    expr: sympy.Expr, sizes: list[sympy.Symbol]
) -> tuple[int, sympy.Expr] | None:
    try:
        poly = sympy.Poly(expr, *sizes)
    except sympy.PolynomialError:
        return None
    if poly.is_zero:
        return None
    terms = poly.terms()
    degree = max(sum(monomial) for monomial, _ in terms)
    coefficient = sum((c for monomial, c in terms if sum(monomial) == degree), ZERO)
    if coefficient == 0:
        return None  # leading terms cancel when sizes are equal: let sympy decide
    return degree, as_expression(coefficient)


def _leading_of_terms(terms: list[Term], sizes: set[sympy.Symbol]) -> tuple[int, sympy.Expr] | None:
    """`_leading` read off the terms of a polynomial in plain symbols."""
    if not terms:
        return None  # the zero polynomial (`n**2 - m*n` with n = m) has no leading term
    degrees = [sum(p for s, p in monomial.items() if s in sizes) for _, monomial in terms]
    degree = max(degrees)
    coefficient = sympy.Add(
        *(
            sympy.Mul(c, *(s**p for s, p in monomial.items() if s not in sizes))
            for (c, monomial), d in zip(terms, degrees, strict=True)
            if d == degree
        )
    )
    if coefficient == 0:
        return None
    return degree, coefficient


def finite_value(expr: sympy.Expr | float | None) -> float | None:
    """The float value of a closed expression; None if it still has symbols, is infinite
    or not real, or is something sympy cannot evaluate (a sum with no closed form)."""
    if isinstance(expr, float):  # already evaluated (a Poly at a float)
        return expr if math.isfinite(expr) else None
    if expr is None or is_infinity(expr) or expr.free_symbols:
        return None
    if is_poly(expr):
        try:
            return float(expr)
        except OverflowError:  # beyond a double: not finite
            return None
    try:
        value = complex(sympy.N(expr))
    except TypeError:
        return None
    if value.imag or not math.isfinite(value.real):
        return None
    return value.real


def settled_hinges(expr: sympy.Expr, variable: sympy.Symbol) -> sympy.Expr:
    """`expr` with each hinge `Max(0, p)` whose argument falls without bound as `variable`
    grows replaced by 0: such a hinge (a footprint's small-size correction, `Max(0, 4 - x)`)
    is 0 past p's largest root, so limits as `variable` grows are unchanged. A hinge whose
    argument does not fall (`Max(0, x - 4)`, `Max(0, 4 - t)` in another symbol) is kept."""
    if is_poly(expr):
        return _settled_poly_hinges(expr, {variable})
    if not expr.has(sympy.Max):
        return expr
    settled = {hinge: sympy.S.Zero for hinge in expr.atoms(sympy.Max) if _falls(hinge, variable)}
    return normal(expr.xreplace(settled)) if settled else expr


def _settled_poly_hinges(poly: Poly, growing: Collection[Any]) -> Poly:
    """A Poly's own hinges `Max(0, c - s)` with s among the `growing` symbols set to 0:
    each is 0 from s = c on (what `settled_hinges` and `past_bends` do to sympy's `Max`)."""
    if not poly.hinged:
        return poly
    names = {str(s) for s in growing if is_size_symbol(s)}
    settled = {atom: ZERO for atom, (_, name) in poly.hinges().items() if name in names}
    return poly.without_hinges(settled) if settled else poly


def _falls(hinge: sympy.Max, variable: sympy.Symbol) -> bool:
    """Whether `hinge` is `Max(0, p)` with p a polynomial in `variable` alone whose leading
    term has a positive degree and a negative coefficient (exactly: p's own terms)."""
    if len(hinge.args) != 2 or not any(a.is_zero for a in hinge.args):
        return False
    (argument,) = (a for a in hinge.args if not a.is_zero)
    terms = terms_of(expand(argument))
    if terms is None or any(set(monomial) - {variable} for _, monomial in terms):
        return False
    leading = _leading_of_terms(terms, {variable})
    return leading is not None and leading[0] > 0 and bool(leading[1] < 0)


def _limit_past_roundings(expr: sympy.Expr, variable: sympy.Symbol) -> sympy.Expr | None:
    """The infinite limit of a polynomial in `variable` and its roundings (`floor`,
    `ceiling` of `a*x + b`, `a` a nonzero rational): a crossover's gap at a tile's count
    (`-29*ceiling(x/3 - 2/3)`), where sympy's `limit` took about 50 ms. Each rounding is
    its argument less a part below one, so in a term of degree d (the roundings counted
    as x) setting each to its argument changes the term by less than a constant times
    x**(d - 1). Where the polynomial so made keeps the full degree D >= 1 (its terms of
    degree D do not cancel), the expression is its leading term plus less than
    x**(D - 1): plus or minus infinity by that term's sign. A ratio of two such sums
    where both keep their full degree (`(2*x - 3*ceiling(x/3) + 3)/(16*x + ...)`) has
    the limit of their leading terms. None elsewhere (a rounding of anything else, other
    symbols, a cancelled leading degree), left to sympy."""
    roundings = expr.atoms(sympy.floor, sympy.ceiling)
    if not roundings:
        return None
    arguments = {}
    for rounding in roundings:
        argument = rounding.args[0]
        if argument.free_symbols != {variable} or not argument.is_polynomial(variable):
            return None
        if sympy.degree(argument, variable) != 1:
            return None
        arguments[rounding] = argument
    top, bottom = sympy.fraction(sympy.together(expr))
    leading = [
        _leading_past_roundings(side, variable, roundings, arguments) for side in (top, bottom)
    ]
    if leading[0] is None or leading[1] is None:
        return None
    if bottom == 1 and leading[0][0] < (0, 1):
        return None  # a polynomial: only an infinite limit is read here
    return _limit_of_powers(leading[0], leading[1])


def _leading_past_roundings(
    side: sympy.Expr,
    variable: sympy.Symbol,
    roundings: Collection[sympy.Expr],
    arguments: Mapping[sympy.Expr, sympy.Expr],
) -> tuple[_Growth, sympy.Rational] | None:
    """`side`'s leading term in `variable` with its roundings set to their arguments,
    where that keeps its full degree (`_limit_past_roundings`); None elsewhere."""
    try:
        whole = sympy.Poly(side, variable, *roundings)
        unrounded = sympy.Poly(side.xreplace(arguments), variable)
    except sympy.PolynomialError:
        return None
    if not all(p.domain.is_ZZ or p.domain.is_QQ for p in (whole, unrounded)):
        return None  # another symbol, or floats
    degree = whole.total_degree()
    if unrounded.is_zero or unrounded.degree() != degree:
        return None
    return (0, degree), unrounded.LC()


def _settled_roundings(expr: sympy.Expr, variable: sympy.Symbol) -> sympy.Expr:
    """`expr` with each rounding of `c/x + d` (`x` the variable, c and d rational, c not
    0) replaced by the integer it equals for every large x: `ceiling(16/x)` is 1 from
    x = 16 on, `ceiling(-1/x)` is 0 from x = 1 on (a crossover's gap where a tile's count
    is the size, about 5 ms of sympy's `limit` each). The limit is that of the
    expression so made, which equals `expr` past some x. `expr` itself where there is no
    such rounding."""
    replaced = {}
    for rounding in expr.atoms(sympy.floor, sympy.ceiling):
        value = _rounding_at_infinity(rounding, variable)
        if value is not None:
            replaced[rounding] = value
    return expr.xreplace(replaced) if replaced else expr


def _rounding_at_infinity(rounding: sympy.Expr, variable: sympy.Symbol) -> sympy.Integer | None:
    """The integer `floor(c/x + d)` or `ceiling(c/x + d)` equals for every large x: its
    argument tends to d from above (c > 0) or from below (c < 0)."""
    argument = rounding.args[0]
    if argument.free_symbols != {variable}:
        return None
    times_variable = sympy.expand(argument * variable)
    if not times_variable.is_polynomial(variable) or sympy.degree(times_variable, variable) > 1:
        return None
    d, c = times_variable.coeff(variable, 1), times_variable.coeff(variable, 0)
    if not (c.is_Rational and d.is_Rational) or c == 0:
        return None
    below = c < 0  # the argument approaches d from below
    if isinstance(rounding, sympy.floor):
        return d - 1 if d.is_Integer and below else sympy.floor(d)
    return d + 1 if d.is_Integer and not below else sympy.ceiling(d)


def _limit_of_growth_terms(expr: sympy.Expr, variable: sympy.Symbol) -> sympy.Expr | None:
    """The limit of a ratio of sums of rational multiples of `x**p` and `x**(t*x + p)`
    (`_growth_terms`), expanded (`2*x*(x - 1) - (x - 1)**2`), read off the leading terms
    as `_limit_of_powers` reads them: a recursion's path with `x**x` in it took sympy's
    `limit` up to 170 ms, a ratio of polynomials tens of milliseconds. None for any other
    expression (another symbol, a rounding, a root), left to the rules after it."""
    if expr.free_symbols != {variable} or expr.atoms(sympy.Function):
        return None  # another symbol, a rounding, a hinge: no sum of such terms
    top, bottom = sympy.fraction(sympy.together(expr))
    leading = [_leading_growth_term(sympy.expand(side), variable) for side in (top, bottom)]
    if leading[0] is None or leading[1] is None:
        return None
    return _limit_of_powers(leading[0], leading[1])


def limit_at_infinity(expr: sympy.Expr, variable: sympy.Symbol) -> sympy.Expr | None:
    """sympy's limit as `variable` grows, or None where sympy cannot take it (it raises
    on some expressions, such as `Min` of a size and an unknown trip count). Hinges that
    settle at 0 are taken out first (`settled_hinges`): sympy's series fail on them."""
    expr = settled_hinges(expr, variable)
    terms = terms_of(expr)
    if terms is not None and all(set(monomial) <= {variable} for _, monomial in terms):
        # A polynomial in `variable` alone (a crossover's gap): its leading term decides,
        # as sympy's `limit` would after tens of milliseconds.
        leading = _leading_of_terms(terms, {variable})
        if leading is None or leading[0] == 0:
            return expr  # a constant
        return sympy.oo if leading[1] > 0 else -sympy.oo
    plain = to_sympy(expr)
    settled = _settled_roundings(plain, variable)
    if settled is not plain:
        return limit_at_infinity(settled, variable)
    for rule in (_limit_of_growth_terms, _limit_past_roundings):
        found = rule(plain, variable)
        if found is not None:
            return found
    try:
        result = sympy.limit(expr, variable, sympy.oo)
    except (NotImplementedError, ValueError, TypeError):
        return None
    return result if not result.has(sympy.Limit) else None
