"""A count's factors as `sympy.factor` prints them, read off a `Poly` without sympy (issue 33).

The text report writes `4*m*n - 8*m - 8*n + 16` as `4*(m - 2)*(n - 2)`. Importing sympy for
that costs more than the rest of a one-kernel run, so the factoring of the shapes counts have
is done here: the integer content and the common monomial out; then, per variable, the
factors in that variable alone (the gcd of its coefficient polynomials over the other
variables' monomials, whose rational roots give `(a*x - b)`; a part of degree 2 or 3 left
without a root is irreducible); then the rest must be shown irreducible (a constant; of
degree 1 in a variable, `a*x + b`, with `a` and `b` shown coprime; multilinear with no split
of its variables into two sets whose coefficient matrix has rank 1). Anything else is None,
and the caller asks sympy. The text is then written as sympy's `Mul` writes the product:
factors in `Expr.sort_key` order, the coefficient's numerator first, the denominator after
`/` (tests/test_factored_text.py holds both to sympy).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from itertools import combinations
from math import gcd, isqrt
from typing import Any

from aiscan.algebra import HINGE, Poly, ordered_terms, polynomial_text
from aiscan.analysis.hinged_cancel import _sort_gens_key

__all__ = ["Factoring", "factor_list", "product_text", "quotient_factors", "sum_factors"]

Var = tuple[str, str]
Monomial = tuple[tuple[Var, int], ...]
Terms = dict[Monomial, Fraction]
Factoring = tuple[Fraction, dict[Poly, int]]
"""A positive number and each irreducible primitive factor (a symbol or a sum, its leading
coefficient positive as sympy's `factor_list` makes it) with its power."""

MAX_VARIABLES = 6
"""More variables than this are left to sympy (the split test looks at every split)."""
MAX_ROOT_COEFFICIENT = 10**6
"""Rational roots are sought among the divisors of coefficients up to this size."""


def factor_list(poly: Poly) -> Factoring | None:
    """`poly` as its positive content times irreducible factors with their powers, as
    `sympy.factor_list` finds them; None where some factor is not shown irreducible, the
    sign in front is negative, or a symbol is a hinge or shares its name."""
    if not poly.terms or poly.hinged or polynomial_text(poly) is None:
        return None
    variables = sorted({v for m in poly.terms for v, _ in m}, key=_sort_gens_key)
    if len(variables) > MAX_VARIABLES:
        return None
    terms: Terms = {m: Fraction(c) for m, c in poly.terms.items()}
    content = poly.content()
    if _leading(terms, variables) < 0:
        return None  # `-(n - 2)` is a sum sympy writes `2 - n`: its own to write
    terms = {m: c / content for m, c in terms.items()}
    factors: dict[Poly, int] = {}
    common = poly.common_monomial(poly)
    for var, power in common.items():
        factors[Poly({((var, 1),): 1})] = power
    terms = {_divided(m, common): c for m, c in terms.items()}
    for var in variables:
        found = _univariate_factors(terms, var)
        if found is None:
            return None
        for factor, power in found:
            for _ in range(power):
                quotient = _exact_quotient(terms, factor, var)
                assert quotient is not None, "a factor of the gcd divides the polynomial"
                terms = quotient
            factors[_poly(factor, var)] = power
    if set(terms) != {()}:
        if not _irreducible(terms):
            return None
        factors[Poly({m: _plain(c) for m, c in terms.items()})] = 1
    elif terms[()] != 1:
        return None  # not primitive: a bug upstream, left to sympy
    return content, factors


def quotient_factors(numerator: Factoring, denominator: Factoring) -> Factoring:
    """`factor(top)/factor(bottom)` as sympy's `Mul` evaluates it: the numbers divided, the
    powers of equal factors added (a common factor cancels)."""
    factors = dict(numerator[1])
    for factor, power in denominator[1].items():
        factors[factor] = factors.get(factor, 0) - power
        if not factors[factor]:
            del factors[factor]
    return numerator[0] / denominator[0], factors


def sum_factors(factoring: Factoring) -> int:
    """How many factors are sums, a power counted by its exponent (`_sums` in readable)."""
    return sum(abs(power) for factor, power in factoring[1].items() if len(factor.terms) > 1)


def product_text(factoring: Factoring) -> str | None:
    """`str` of sympy's product of the factors; None for a lone factor below one
    (`n**(-2)`, `1/(n + 1)`), which sympy's `_print_Pow` writes."""
    coefficient, factors = factoring
    sums = [(f, p) for f, p in factors.items() if len(f.terms) > 1]
    if len(factors) == 1 and len(sums) == 1 and sums[0][1] == 1:
        # sympy's `Mul` distributes a number over a lone sum: `2*(n + 1)` is `2*n + 2`.
        return polynomial_text(sums[0][0] * Poly({(): _plain(coefficient)}))
    if coefficient == 1 and len(factors) == 1 and next(iter(factors.values())) < 0:
        return None
    ordered = sorted(factors.items(), key=lambda item: _factor_key(*item))
    above = [] if coefficient.numerator == 1 else [str(coefficient.numerator)]
    below = [] if coefficient.denominator == 1 else [str(coefficient.denominator)]
    for factor, power in ordered:
        text = _power_text(factor, abs(power))
        if text is None:
            return None
        (above if power > 0 else below).append(text)
    top = "*".join(above) or "1"
    if not below:
        return top
    return f"{top}/{below[0]}" if len(below) == 1 else f"{top}/({'*'.join(below)})"


# -- factoring ----------------------------------------------------------------------------


def _leading(terms: Terms, variables: list[Var]) -> Fraction:
    """The leading coefficient in lex order over `variables`."""
    best = max(terms, key=lambda m: tuple(dict(m).get(v, 0) for v in variables))
    return terms[best]


def _divided(monomial: Monomial, by: dict[Var, int]) -> Monomial:
    """`monomial` over `by`, which divides it."""
    return tuple((v, e - by.get(v, 0)) for v, e in monomial if e - by.get(v, 0))


def _univariate_factors(terms: Terms, var: Var) -> list[tuple[list[Fraction], int]] | None:
    """The irreducible factors in `var` alone, each as coefficients (constant first) and
    its power; None where one of degree 4 or more has no rational root."""
    groups: dict[Any, dict[int, Fraction]] = {}
    for monomial, coefficient in terms.items():
        powers = dict(monomial)
        power = powers.pop(var, 0)
        groups.setdefault(tuple(sorted(powers.items())), {})[power] = coefficient
    divisor: list[Fraction] = []
    for group in groups.values():
        coefficients = [group.get(k, Fraction(0)) for k in range(max(group) + 1)]
        divisor = _gcd(divisor, coefficients) if divisor else _monic(coefficients)
        if len(divisor) == 1:
            return []
    roots = _rational_roots(divisor)
    if roots is None:
        return None
    found: list[tuple[list[Fraction], int]] = []
    for root in roots:
        linear = [-Fraction(root.numerator), Fraction(root.denominator)]
        power = 0
        while len(divisor) > 1 and _evaluate(divisor, root) == 0:
            divisor = _divide(divisor, [-root, Fraction(1)])
            power += 1
        found.append((linear, power))
    if len(divisor) > 4:
        return None
    if len(divisor) > 1:  # degree 2 or 3, no rational root: irreducible over Q
        found.append((_primitive(divisor), 1))
    return found


def _rational_roots(coefficients: list[Fraction]) -> list[Fraction] | None:
    """The rational roots of a polynomial (constant first), by the rational root test;
    None where its coefficients are too large to try every divisor."""
    scale = 1
    for c in coefficients:
        scale = scale * c.denominator // gcd(scale, c.denominator)
    integers = [int(c * scale) for c in coefficients]
    while integers and integers[0] == 0:
        integers.pop(0)  # x divides it: cannot happen once the common monomial is out
    if len(integers) < 2:
        return []
    last, first = abs(integers[-1]), abs(integers[0])
    if max(last, first) > MAX_ROOT_COEFFICIENT:
        return None
    roots = {
        sign * Fraction(p, q) for p in _divisors(first) for q in _divisors(last) for sign in (1, -1)
    }
    return sorted(r for r in roots if _evaluate(coefficients, r) == 0)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in small]


def _evaluate(coefficients: list[Fraction], x: Fraction) -> Fraction:
    value = Fraction(0)
    for c in reversed(coefficients):
        value = value * x + c
    return value


def _monic(coefficients: list[Fraction]) -> list[Fraction]:
    while coefficients and coefficients[-1] == 0:
        coefficients = coefficients[:-1]
    return [c / coefficients[-1] for c in coefficients]


def _primitive(coefficients: list[Fraction]) -> list[Fraction]:
    """Integer coefficients without a common divisor, the leading one positive."""
    scale = 1
    for c in coefficients:
        scale = scale * c.denominator // gcd(scale, c.denominator)
    integers = [int(c * scale) for c in coefficients]
    common = 0
    for value in integers:
        common = gcd(common, value)
    sign = 1 if integers[-1] > 0 else -1
    return [Fraction(sign * value, common) for value in integers]


def _divide(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    """The quotient of `a` by `b`, which divides it."""
    remainder = list(a)
    quotient = [Fraction(0)] * (len(a) - len(b) + 1)
    for k in range(len(quotient) - 1, -1, -1):
        quotient[k] = remainder[k + len(b) - 1] / b[-1]
        for i, c in enumerate(b):
            remainder[k + i] -= quotient[k] * c
    return quotient


def _gcd(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    """The monic gcd of two univariate polynomials over Q (Euclid)."""
    a, b = _monic(a), _monic(b) if any(b) else []
    while b:
        remainder = list(a)
        while len(remainder) >= len(b) and any(remainder):
            factor = remainder[-1] / b[-1]
            shift = len(remainder) - len(b)
            for i, c in enumerate(b):
                remainder[shift + i] -= factor * c
            while remainder and remainder[-1] == 0:
                remainder.pop()
        a, b = b, _monic(remainder) if remainder else []
    return _monic(a)


def _exact_quotient(terms: Terms, factor: list[Fraction], var: Var) -> Terms | None:
    """`terms` divided by the polynomial `factor` in `var` alone; None if it does not
    divide them."""
    divisor: Terms = {(((var, k),) if k else ()): c for k, c in enumerate(factor) if c}
    return _divided_by(terms, divisor, var)


def _divided_by(terms: Terms, divisor: Terms, var: Var) -> Terms | None:
    """`terms` divided by `divisor`, whose coefficient of its top power of `var` is a
    number; None if it does not divide them."""
    degree = max(dict(m).get(var, 0) for m in divisor)
    (lead,) = [c for m, c in divisor.items() if dict(m).get(var, 0) == degree]
    remainder = dict(terms)
    quotient: Terms = {}
    while remainder:
        top = max(dict(m).get(var, 0) for m in remainder)
        if top < degree:
            return None
        for monomial in [m for m in remainder if dict(m).get(var, 0) == top]:
            powers = dict(monomial)
            powers[var] = top - degree
            shifted = _monomial(powers)
            ratio = remainder.pop(monomial) / lead
            quotient[shifted] = quotient.get(shifted, Fraction(0)) + ratio
            for other, c in divisor.items():
                if dict(other).get(var, 0) == degree:
                    continue
                key = _monomial({**powers}, other)
                value = remainder.get(key, Fraction(0)) - ratio * c
                if value:
                    remainder[key] = value
                else:
                    remainder.pop(key, None)
    return quotient


def _monomial(powers: dict[Var, int], times: Monomial = ()) -> Monomial:
    """The monomial of `powers`, times another."""
    total = dict(powers)
    for v, e in times:
        total[v] = total.get(v, 0) + e
    return tuple(sorted((v, e) for v, e in total.items() if e))


def _irreducible(terms: Terms) -> bool:
    """Whether a primitive polynomial without a common monomial or factors in one variable
    is shown irreducible: of degree 1 in a variable, `a*x + b`, with `a` and `b` shown
    coprime (a factor without x would divide both); or multilinear and not a product over
    two disjoint sets of its variables."""
    variables = sorted({v for m in terms for v, _ in m})
    for var in variables:
        if max(dict(m).get(var, 0) for m in terms) != 1:
            continue
        a = {_divided(m, {var: 1}): c for m, c in terms.items() if dict(m).get(var, 0)}
        b = {m: c for m, c in terms.items() if not dict(m).get(var, 0)}
        if _coprime(a, b):
            return True
    if any(e > 1 for m in terms for _, e in m):
        return False
    first, rest = variables[0], variables[1:]
    for size in range(len(rest)):
        for chosen in combinations(rest, size):
            if _splits(terms, {first, *chosen}):
                return False
    return True


def _coprime(a: Terms, b: Terms) -> bool:
    """Whether `a` and `b` (whose sum with a variable is primitive, without a common
    monomial) are shown to have no common factor but numbers: one is a monomial, whose
    factors are monomials; one is linear, so irreducible, and does not divide the other;
    or both are in one variable, with a gcd of degree 0."""
    if len(a) == 1 or len(b) == 1:
        return True
    for one, other in ((a, b), (b, a)):
        if all(sum(e for _, e in m) <= 1 for m in one):
            var = next(v for m in one for v, _ in m)
            return _divided_by(other, one, var) is None
    names = {v for m in [*a, *b] for v, _ in m}
    if len(names) != 1:
        return False
    (var,) = names
    gcd_ = _gcd(_coefficients(a, var), _coefficients(b, var))
    return len(gcd_) == 1


def _coefficients(terms: Terms, var: Var) -> list[Fraction]:
    """A polynomial in `var` alone as its coefficients, constant first."""
    powers = {dict(m).get(var, 0): c for m, c in terms.items()}
    return [powers.get(k, Fraction(0)) for k in range(max(powers) + 1)]


def _splits(terms: Terms, side: set[Var]) -> bool:
    """Whether `terms` is a product of a polynomial in `side` and one in the others: its
    coefficient matrix, rows by the `side` part of each monomial, has rank 1."""
    rows: dict[Any, dict[Any, Fraction]] = {}
    for monomial, coefficient in terms.items():
        left = tuple(p for p in monomial if p[0] in side)
        right = tuple(p for p in monomial if p[0] not in side)
        rows.setdefault(left, {})[right] = coefficient
    columns = set().union(*(row.keys() for row in rows.values()))
    if len(rows) < 2 or len(columns) < 2:
        return False
    first = next(iter(rows.values()))
    if first.keys() != columns:
        return False
    pivot = next(iter(columns))
    for row in rows.values():
        if row.keys() != columns:
            return False
        ratio = row[pivot] / first[pivot]
        if any(row[c] != ratio * first[c] for c in columns):
            return False
    return True


def _poly(coefficients: list[Fraction], var: Var) -> Poly:
    terms: dict[Monomial, int | Fraction] = {
        (((var, k),) if k else ()): _plain(c) for k, c in enumerate(coefficients) if c
    }
    return Poly(terms)


def _plain(value: Fraction) -> int | Fraction:
    """A `Poly` coefficient: an `int` where it is one."""
    return value.numerator if value.denominator == 1 else value


# -- text, as sympy's `Mul` orders and prints it ---------------------------------------------

_NUMBER, _SYMBOL, _MUL, _ADD = (1, 0, "Number"), (2, 0, "Symbol"), (3, 0, "Mul"), (3, 1, "Add")


def _number_key(value: int | Fraction) -> tuple[Any, ...]:
    return (_NUMBER, (0, ()), (), value)


def _symbol_key(name: str, power: int, coefficient: int | Fraction) -> tuple[Any, ...]:
    return (_SYMBOL, (1, (name,)), _number_key(power), coefficient)


def _term_key(monomial: Iterable[tuple[Var, int]], coefficient: int | Fraction) -> Any:
    """A term's `Expr.sort_key`: a number, a power of one symbol, or a product of them."""
    powers = list(monomial)
    if not powers:
        return _number_key(coefficient)
    if len(powers) == 1:
        ((name, _), power) = powers[0]
        return _symbol_key(name, power, coefficient)
    factors = tuple(sorted(_symbol_key(name, power, 1) for (name, _), power in powers))
    return (_MUL, (len(factors), factors), _number_key(1), coefficient)


def _factor_key(factor: Poly, power: int) -> Any:
    """`Pow(factor, power).sort_key()`: symbols by name before sums, sums by their number
    of terms, then by their terms' keys in printed order."""
    if len(factor.terms) == 1:
        (((var, _),),) = factor.terms
        return _symbol_key(var[0], power, 1)
    ordered = ordered_terms(factor)
    assert ordered is not None, "names are checked unique before"
    keys = tuple(_term_key(m, c) for m, c in ordered)
    return (_ADD, (len(keys), keys), _number_key(power), 1)


def _power_text(factor: Poly, power: int) -> str | None:
    text = polynomial_text(factor)
    if text is None or any(v[1] == HINGE for m in factor.terms for v, _ in m):
        return None
    if len(factor.terms) > 1:
        text = f"({text})"
    return text if power == 1 else f"{text}**{power}"
