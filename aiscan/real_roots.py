"""Roots of a polynomial in one variable, without sympy.

Two questions are asked of such polynomials on a placed path: where a working set reaches
a cache's capacity (the cache model's `breaks_at`, a float the JSON writes to its last bit)
and where an intensity reaches a ridge (a crossover, exact). sympy answered both, and
importing it cost more than the rest of a one-kernel run. Here:

- `numeric_roots` is sympy's `Poly.nroots()`, bit for bit: degree 1 by the very Durand-Kerner
  steps mpmath takes, in exact rationals rounded as mpmath rounds; higher degrees by mpmath
  itself (a twentieth of sympy's import), with the arguments sympy passes.
"""

from __future__ import annotations

import math
from fractions import Fraction

from aiscan.algebra import Poly, Var

__all__ = ["integer_coefficients", "numeric_roots"]


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
