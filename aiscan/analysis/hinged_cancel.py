"""The cancelled ratio of two polynomials that hold footprint hinges `Max(0, c - s)`, as
`analysis.intensity` wrote it through `sympy.cancel`, without sympy (issue 33).

sympy's `cancel` takes each `Max` for one more generator: the ratio comes out as two
integer polynomials without a common factor or a common integer content, the bottom's
leading coefficient positive in the order `sympy.polys.polyutils._sort_gens` gives its
generators; `intensity._cancelled_with_poly` then turns both signs where the bottom falls
once the sizes have grown. Here a `Poly` carries each hinge as a variable, so the same
result is read off its terms: the common monomial taken out, then the common factor shown
to be a number or a polynomial in one variable by specializing all variables but one,
and divided out (`_without_common_factor`). Where that cannot be shown, the answer is
None and sympy decides. Two sums without hinges get `_cancelled_polynomials`' normal
form the same way (`cancelled_sums`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from aiscan.algebra import ONE, Poly, constant, polynomial_text

__all__ = ["cancelled_hinged", "cancelled_sums", "coprime_contents", "sort_gens_key_of_text"]

Var = tuple[str, str]
_PROBE_POINTS = 3
"""Specializations tried per variable before the common factor is left to sympy."""


def cancelled_hinged(
    numerator: Poly,
    denominator: Poly,
    grows_negative: Callable[[Poly], bool | None],
) -> tuple[Poly, Poly] | None:
    """`numerator/denominator` (one of them hinged) in `sympy.cancel`'s normal form, then
    with both signs turned where `grows_negative(bottom)` says the bottom falls; None
    where a common factor may be more than a monomial, or two symbols share a name."""
    if not denominator.terms or numerator.has_name_clash(denominator):
        return None
    if not numerator.terms:
        return None  # 0/x: sympy's cancel writes 0, its caller decides
    common = numerator.common_monomial(denominator)
    top = numerator.divided_by_monomial(common)
    bottom = denominator.divided_by_monomial(common)
    if len(top.terms) > 1 and len(bottom.terms) > 1:
        cofactors = _without_common_factor(top, bottom)
        if cofactors is None:
            return None
        top, bottom = cofactors
    result = _normalized(top, bottom, _sort_gens_leading, grows_negative)
    if result is not None and result[1].is_number and len(result[0].terms) > 1:
        # sympy's `c*(p/q)` distributes a number over a sum: `n/2 + Max(0, 2 - n)/2`
        # over 1, which `fraction` leaves so.
        return result[0] / result[1], ONE
    return result


def cancelled_sums(numerator: Poly, denominator: Poly) -> tuple[Poly, Poly] | None:
    """`intensity._cancelled_polynomials` of two sums without hinges, without sympy's
    sparse polynomials: the bottom's leading coefficient positive in lex order over the
    symbols sorted by name; None where the common factor is not shown to be a
    polynomial in at most one symbol, or two symbols share a name."""
    if numerator.has_name_clash(denominator) or polynomial_text(denominator) is None:
        return None
    # The common monomial first (PolyBench gemm's `ni*nj` in `3*ni*nj*nk + ni*nj` over
    # `32*ni*nj*nk + 16*ni*nj`): the divisor left is then shown in one variable or none.
    common = numerator.common_monomial(denominator)
    numerator = numerator.divided_by_monomial(common)
    denominator = denominator.divided_by_monomial(common)
    cofactors = _without_common_factor(numerator, denominator)
    if cofactors is None or not cofactors[0].terms:
        return None
    top, bottom = cofactors
    return _normalized(top, bottom, lambda p: Fraction(p.leading_coefficient()), lambda _: False)


def _normalized(
    top: Poly,
    bottom: Poly,
    leading: Callable[[Poly], Fraction],
    grows_negative: Callable[[Poly], bool | None],
) -> tuple[Poly, Poly] | None:
    """Coprime integer contents, the bottom's `leading` coefficient positive, then both
    signs turned where `grows_negative`."""
    if leading(bottom) < 0:
        top, bottom = -top, -bottom
    turned = grows_negative(bottom)
    if turned is None:
        return None
    if turned:
        top, bottom = -top, -bottom
    return coprime_contents(top, bottom)


def coprime_contents(top: Poly, bottom: Poly) -> tuple[Poly, Poly]:
    """`top/bottom` with coprime integer coefficients on both sides (`(n + 1)/48`, not
    `(n/2 + 1/2)/24`): the normal form every cancellation here ends in."""
    top_content, bottom_content = top.content(), bottom.content()
    ratio = top_content / bottom_content
    return (
        top * constant(ratio.numerator / top_content),
        bottom * constant(ratio.denominator / bottom_content),
    )


_GEN = re.compile(r"^(.*?)(\d*)$", re.MULTILINE)
_LETTER_ORDER = {
    **{letter: 301 + i for i, letter in enumerate("abcdefghijklmno")},
    **{letter: 216 + i for i, letter in enumerate("pqrstuvw")},
    **{"x": 124, "y": 125, "z": 126},
}
"""`sympy.polys.polyutils._gens_order`: single letters before other names."""


def _sort_gens_key(var: Var) -> tuple[int, str, int]:
    """`_sort_gens`' key of a generator's text (a hinge's is its `Max(...)` text)."""
    return sort_gens_key_of_text(var[0])


def sort_gens_key_of_text(text: str) -> tuple[int, str, int]:
    """`sympy.polys.polyutils._sort_gens`' key of a generator printed as `text`."""
    match = _GEN.match(text)
    assert match is not None
    name, index = match.groups()
    return (_LETTER_ORDER.get(name, 1000), name, int(index) if index else 0)


def _sort_gens_leading(poly: Poly) -> Fraction:
    """The leading coefficient in lex order over the generators as `_sort_gens` orders
    them (sympy's `cancel` makes it positive)."""
    variables = sorted({v for m in poly.terms for v, _ in m}, key=_sort_gens_key)
    best = max(poly.terms, key=lambda m: tuple(dict(m).get(v, 0) for v in variables))
    return Fraction(poly.terms[best])


def _without_common_factor(a: Poly, b: Poly) -> tuple[Poly, Poly] | None:
    """`a` and `b` divided by their greatest common divisor, up to a number, when that
    divisor is shown to be a polynomial in at most one variable; None otherwise.

    Its degree in each variable both hold is at most that of the univariate gcd at values
    of the others where neither leading coefficient in it vanishes. Where only one
    variable v is left with a positive bound, the divisor is in Q[v] alone, so it is the
    gcd of every coefficient (in v) of both, found by Euclid's algorithm."""
    if a.terms.keys() == b.terms.keys():
        ratios = {Fraction(c) / b.terms[m] for m, c in a.terms.items()}
        if len(ratios) == 1:  # one a multiple of the other (jacobi2d's streaming 1/10)
            return constant(ratios.pop()), ONE
    shared = sorted(_variables(a) & _variables(b), key=_sort_gens_key)
    bounded = [var for var in shared if _degree_bound(a, b, var) > 0]
    if not bounded:
        return a, b
    if len(bounded) > 1:
        return None
    (var,) = bounded
    parts = [_by_rest(poly, var) for poly in (a, b)]
    divisor: list[Fraction] = []
    for coefficients in (c for part in parts for c in part.values()):
        divisor = _gcd(divisor, coefficients) if divisor else _gcd(coefficients, [])
    if len(divisor) == 1:
        return a, b
    return _rebuilt(parts[0], var, divisor), _rebuilt(parts[1], var, divisor)


def _variables(poly: Poly) -> set[Var]:
    return {v for m in poly.terms for v, _ in m}


def _degree_bound(a: Poly, b: Poly, var: Var) -> int:
    """An upper bound of the degree in `var` of the gcd of `a` and `b` (the least of
    those at `_PROBE_POINTS` specializations of the other variables)."""
    others = sorted((_variables(a) | _variables(b)) - {var}, key=_sort_gens_key)
    bound: int | None = None
    tried = 0
    for start in range(2, 60):
        values = {v: start + 3 * i for i, v in enumerate(others)}
        first, second = _univariate(a, var, values), _univariate(b, var, values)
        if first is None or second is None:
            continue  # a leading coefficient vanishes there: another point
        degree = len(_gcd(first, second)) - 1
        bound = degree if bound is None else min(bound, degree)
        tried += 1
        if bound == 0 or tried >= _PROBE_POINTS:
            break
    return 1 if bound is None else bound  # no point found: not shown coprime


def _by_rest(poly: Poly, var: Var) -> dict[tuple[tuple[Var, int], ...], list[Fraction]]:
    """The coefficients in `var` (constant first) of each monomial of the other variables."""
    parts: dict[tuple[tuple[Var, int], ...], dict[int, Fraction]] = {}
    for monomial, coefficient in poly.terms.items():
        power = next((e for v, e in monomial if v == var), 0)
        rest = tuple(pair for pair in monomial if pair[0] != var)
        parts.setdefault(rest, {})[power] = Fraction(coefficient)
    return {
        rest: [powers.get(k, Fraction(0)) for k in range(max(powers) + 1)]
        for rest, powers in parts.items()
    }


def _rebuilt(
    parts: dict[tuple[tuple[Var, int], ...], list[Fraction]], var: Var, divisor: list[Fraction]
) -> Poly:
    """The polynomial of `parts` with each coefficient in `var` divided by `divisor`."""
    terms: dict[tuple[tuple[Var, int], ...], int | Fraction] = {}
    for rest, coefficients in parts.items():
        quotient, remainder = _divided(coefficients, divisor)
        assert not remainder, "the divisor divides every coefficient"
        for power, value in enumerate(quotient):
            if value:
                monomial = tuple(sorted(rest + (((var, power),) if power else ())))
                terms[monomial] = value.numerator if value.denominator == 1 else value
    return Poly(terms)


def _univariate(poly: Poly, var: Var, values: dict[Var, int]) -> list[Fraction] | None:
    """`poly` as a polynomial in `var` (coefficients, constant first) with the other
    variables at `values`; None where its leading coefficient vanishes there. A hinge is
    a variable of its own here, as for sympy's `cancel`."""
    coefficients: dict[int, Fraction] = {}
    for monomial, coefficient in poly.terms.items():
        power = 0
        value = Fraction(coefficient)
        for v, e in monomial:
            if v == var:
                power = e
            else:
                value *= values[v] ** e
        coefficients[power] = coefficients.get(power, Fraction(0)) + value
    degree = max(coefficients)
    if not coefficients[degree]:
        return None
    return [coefficients.get(k, Fraction(0)) for k in range(degree + 1)]


def _gcd(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    """The monic greatest common divisor of two univariate polynomials over the rationals
    (coefficients constant first), by Euclid's algorithm."""
    while b:
        a, b = b, _remainder(a, b)
    return [c / a[-1] for c in a]


def _remainder(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    return _divided(a, b)[1]


def _divided(a: list[Fraction], b: list[Fraction]) -> tuple[list[Fraction], list[Fraction]]:
    """Quotient and remainder of univariate polynomials (coefficients constant first)."""
    a = list(a)
    while a and not a[-1]:
        a.pop()
    quotient = [Fraction(0)] * max(len(a) - len(b) + 1, 0)
    while len(a) >= len(b):
        factor = a[-1] / b[-1]
        shift = len(a) - len(b)
        quotient[shift] = factor
        for k, c in enumerate(b):
            a[shift + k] -= factor * c
        a.pop()
        while a and not a[-1]:
            a.pop()
    return quotient, a
