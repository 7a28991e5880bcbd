"""Roots of a polynomial in one variable, without sympy.

Two questions are asked of such polynomials on a placed path: where a working set reaches
a cache's capacity (the cache model's `breaks_at`, a float the JSON writes to its last bit)
and where an intensity reaches a ridge (a crossover, exact). sympy answered both, and
importing it cost more than the rest of a one-kernel run. Here:

- `numeric_roots` is sympy's `Poly.nroots()`, bit for bit: degree 1 by the very Durand-Kerner
  steps mpmath takes, in exact rationals rounded as mpmath rounds; higher degrees by mpmath
  itself (a twentieth of sympy's import), with the arguments sympy passes;
- `positive_rational_roots` gives a crossover's roots exactly where all of them are
  rational (most: a root at 1, or none at all), so that only irrational ones need sympy's
  radicals.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from aiscan.algebra import Poly, Var

__all__ = ["integer_coefficients", "numeric_roots", "positive_rational_roots"]


def integer_coefficients(poly: Poly, var: Var) -> list[int] | None:
    """The coefficients of `poly`, a polynomial in `var` alone, highest power first, as
    sympy's `nroots` makes them integers (times the lcm of the denominators, if any); None
    when another symbol appears."""
    powers: dict[int, Fraction | int] = {}
    for monomial, coefficient in poly.terms.items():
        if any(v != var for v, _ in monomial):
            return None
        powers[sum(e for _, e in monomial)] = coefficient
    if not powers:
        return []
    scale = math.lcm(*(Fraction(c).denominator for c in powers.values()))
    degree = max(powers)
    return [int(Fraction(powers.get(p, 0)) * scale) for p in range(degree, -1, -1)]


_DIGITS_BITS = 53
"""sympy's `nroots(n=15)` sets mpmath's precision to 15 digits: 53 bits."""
_MAX_STEPS = 50


def numeric_roots(coefficients: list[int]) -> list[complex]:
    """`sympy.Poly(...).nroots()` of the polynomial with these integer coefficients (highest
    first), each as `complex`, in sympy's order. Raises ArithmeticError where sympy raises
    (no convergence)."""
    degree = len(coefficients) - 1
    if degree <= 0:
        return []
    if degree == 1:
        return [_linear_root(*coefficients)]
    import mpmath

    keep = mpmath.mp.dps
    mpmath.mp.dps = 15
    try:
        try:
            roots = mpmath.polyroots(coefficients, maxsteps=_MAX_STEPS, extraprec=degree * 10)
        except mpmath.mp.NoConvergence:
            roots = mpmath.polyroots(coefficients, maxsteps=_MAX_STEPS, extraprec=degree * 15)
        values = [complex(r) for r in roots]
    except mpmath.mp.NoConvergence as error:
        raise ArithmeticError(str(error)) from error
    finally:
        mpmath.mp.dps = keep
    real = [v for v in values if not v.imag]
    rest = sorted((v for v in values if v.imag), key=lambda v: (v.real, abs(v.imag), v.imag > 0))
    return sorted(real, key=lambda v: v.real) + rest


def _linear_root(lead: int, constant: int) -> complex:
    """mpmath's Durand-Kerner on `lead*x + constant` at 53 + 10 bits, started at 1 and
    rounded to 53 bits at the end, as `polyroots` computes it (the quotient rounded twice,
    and each step's sum once)."""
    working = _DIGITS_BITS + 10
    tolerance = Fraction(1, 2 ** (_DIGITS_BITS - 1))
    leading = _rounded(Fraction(lead), working)
    offset = _rounded(Fraction(constant) / leading, working)
    root = Fraction(1)
    error = Fraction(1)
    for _ in range(_MAX_STEPS):
        if error < tolerance:
            break
        step = _rounded(offset + root, working)
        root = _rounded(root - step, working)
        error = abs(step)
    if error >= tolerance:
        raise ArithmeticError("no convergence")
    if abs(root) < tolerance:
        return complex(0.0)
    return complex(float(_rounded(root, _DIGITS_BITS)))


def _rounded(value: Fraction, bits: int) -> Fraction:
    """`value` to `bits` significant binary digits, to nearest, ties to even (mpmath's
    rounding)."""
    if not value:
        return Fraction(0)
    size = abs(value)
    exponent = size.numerator.bit_length() - size.denominator.bit_length()
    if Fraction(2) ** exponent > size:
        exponent -= 1  # now 2**exponent <= size < 2**(exponent + 1)
    shift = exponent - bits + 1
    scaled = size / Fraction(2) ** shift
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and whole % 2):
        whole += 1
    result = whole * Fraction(2) ** shift
    return result if value > 0 else -result


def positive_rational_roots(coefficients: list[int]) -> list[Fraction] | None:
    """The distinct positive real roots of the polynomial with these integer coefficients
    (highest first), ascending, when every one of them is rational; None when one is not
    (sympy's radicals then write it). Roots are counted by Sturm's theorem, isolated by
    bisection on exact rationals, and each is the simplest rational of an interval too
    narrow to hold two fractions whose denominators divide the leading coefficient (the
    rational root theorem), checked exactly."""
    poly = _square_free(_without_zero_roots([Fraction(c) for c in coefficients]))
    if len(poly) < 2:
        return []
    if len(poly) <= 3:
        return _positive_roots_in_closed_form(poly)
    sturm = _sturm_sequence(poly)
    bound = 1 + max(abs(c / poly[0]) for c in poly[1:])  # Cauchy: every root is below it
    narrow = Fraction(1, 2 * abs(coefficients[0]) ** 2)
    roots: list[Fraction] = []
    pending = [(Fraction(0), bound)]
    for _ in range(_MAX_INTERVALS):
        if not pending:
            return sorted(set(roots))
        low, high = pending.pop()
        count = _sign_changes(sturm, low) - _sign_changes(sturm, high)  # roots in (low, high]
        if _value(poly, high) == 0:
            roots.append(high)
            count -= 1
        if count == 0:
            continue
        if count == 1 and high - low < narrow:
            candidate = _simplest_between(low, high)
            if low < candidate < high:
                if _value(poly, candidate) != 0:
                    return None  # an irrational root
                roots.append(candidate)
                continue
        middle = (low + high) / 2
        pending += [(low, middle), (middle, high)]
    return None


def _positive_roots_in_closed_form(poly: list[Fraction]) -> list[Fraction] | None:
    """`positive_rational_roots` of a square-free polynomial of degree 1 or 2, off its
    coefficients: bisection to the rational root theorem's width takes thousands of steps
    when the coefficients hold a ridge's large numerator (jacobi2d's crossover). A
    quadratic's roots are rational when its discriminant is the square of a rational;
    otherwise they are irrational, and matter only when one is positive (their product
    c/a below zero, or it and their sum -b/a above)."""
    if len(poly) == 2:
        root = -poly[1] / poly[0]
        return [root] if root > 0 else []
    a, b, c = poly
    discriminant = b * b - 4 * a * c
    if discriminant < 0:
        return []
    top, bottom = math.isqrt(discriminant.numerator), math.isqrt(discriminant.denominator)
    if top * top != discriminant.numerator or bottom * bottom != discriminant.denominator:
        product, total = c / a, -b / a
        return None if product < 0 or total > 0 else []
    width = Fraction(top, bottom)
    roots = {(-b - width) / (2 * a), (-b + width) / (2 * a)}
    return sorted(root for root in roots if root > 0)


_MAX_INTERVALS = 20_000
"""Bisection steps before giving the question back to sympy (roots of a crossover are
isolated in a few hundred)."""


def _square_free(poly: list[Fraction]) -> list[Fraction]:
    """`poly` over its gcd with its derivative: the same roots, each simple, so that Sturm's
    count holds at every point, roots included."""
    if len(poly) < 3:
        return poly
    common = _sturm_sequence(poly)[-1]
    if len(common) < 2:
        return poly
    quotient = []
    rest = list(poly)
    while len(rest) >= len(common):
        factor = rest[0] / common[0]
        quotient.append(factor)
        for k, c in enumerate(common):
            rest[k] -= factor * c
        rest.pop(0)
    return quotient


def _without_zero_roots(poly: list[Fraction]) -> list[Fraction]:
    end = len(poly)
    while end > 1 and poly[end - 1] == 0:
        end -= 1
    return poly[:end]


def _value(poly: list[Fraction], at: Fraction) -> Fraction:
    total = Fraction(0)
    for c in poly:
        total = total * at + c
    return total


def _derivative(poly: list[Fraction]) -> list[Fraction]:
    degree = len(poly) - 1
    return [c * (degree - k) for k, c in enumerate(poly[:-1])]


def _remainder(dividend: list[Fraction], divisor: list[Fraction]) -> list[Fraction]:
    rest = list(dividend)
    while len(rest) >= len(divisor):
        factor = rest[0] / divisor[0]
        for k, c in enumerate(divisor):
            rest[k] -= factor * c
        rest.pop(0)
    while rest and rest[0] == 0:
        rest.pop(0)
    return rest


def _sturm_sequence(poly: list[Fraction]) -> list[list[Fraction]]:
    sequence = [poly, _derivative(poly)]
    while len(sequence[-1]) > 1:
        rest = _remainder(sequence[-2], sequence[-1])
        if not rest:
            break
        sequence.append([-c for c in rest])
    return sequence


def _sign_changes(sequence: list[list[Fraction]], at: Fraction) -> int:
    """Sign changes of the Sturm sequence at `at`: the distinct real roots in (at, oo)
    are the difference from the count far right."""
    signs = [s for s in (_value(p, at) for p in sequence) if s != 0]
    return sum(1 for a, b in itertools.pairwise(signs) if (a > 0) != (b > 0))


def _simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The rational of smallest denominator in [low, high] (0 <= low <= high), by
    continued fractions."""
    whole = math.floor(low)
    if whole == low or whole + 1 <= high:
        return Fraction(math.ceil(low))
    return whole + 1 / _simplest_between(1 / (high - whole), 1 / (low - whole))
