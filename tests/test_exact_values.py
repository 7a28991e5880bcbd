"""A path's intensity read in Python's rationals is sympy's value at each size, exactly;
what it cannot read (a fractional power, a zero denominator) is left to sympy."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from aiscan.roofline.exact_values import rational_value

n, m = sympy.symbols("n m", integer=True, positive=True)
q, v = sympy.symbols("Q_d0 v_d0", integer=True, positive=True)

RATIONAL = [
    q * (6 * v - 1) / (8 * (6 * q * v + 5 * q + 2 * v)),  # views.py's, as placed
    m * n / (4 * m * n + 4 * m + 8 * n),
    (2 * n - 1) / (4 * n + 2),
    n**2 / (4 * n**2 + 4) - sympy.Rational(3, 7) * m,
    sympy.Integer(5) / 12,
]


@pytest.mark.parametrize("expr", RATIONAL, ids=str)
@pytest.mark.parametrize("size", [1, 8, 4096, 2**40])
def test_the_value_is_sympys_exactly(expr: sympy.Expr, size: int) -> None:
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    found = rational_value(expr, dict.fromkeys(symbols, size))
    theirs = expr.xreplace({s: sympy.Integer(size) for s in symbols})
    assert found == Fraction(int(theirs.p), int(theirs.q))
    assert float(found) == float(theirs)


LATTICE = [
    sympy.floor(n / 2 - sympy.Rational(1, 2)) / n,  # a strided loop's trip, as placed
    (m * sympy.ceiling(n / 8) + 1) / (8 * sympy.ceiling(n / 8) ** 2),
    sympy.Min(n, 32) / (4 * n + 8),
    m * n / (8 * m + 8 * sympy.Max(0, 4 - n)),  # a footprint hinge
]


@pytest.mark.parametrize("expr", LATTICE, ids=str)
@pytest.mark.parametrize("size", [1, 3, 8, 4096, 2**40 + 1])
def test_floor_ceiling_min_and_max_are_read_as_sympy_evaluates_them(
    expr: sympy.Expr, size: int
) -> None:
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    found = rational_value(expr, dict.fromkeys(symbols, size))
    theirs = expr.xreplace({s: sympy.Integer(size) for s in symbols})
    assert found == Fraction(int(theirs.p), int(theirs.q))
    assert float(found) == float(theirs)


def test_what_it_cannot_read_is_left_to_sympy() -> None:
    assert rational_value(n / (n - 8), {n: 8}) is None  # a zero denominator there
    assert rational_value(n / m, {n: 8}) is None  # a symbol without its size
    assert rational_value(n ** sympy.Rational(1, 2), {n: 4}) is None


def test_polynomials_and_quotients_are_read_off_their_terms() -> None:
    from aiscan.algebra import Quotient, normal

    top, bottom = normal(m * n), normal(4 * m * n + 4 * m + 8 * n)
    quotient = Quotient.simplified(top, bottom)
    assert quotient is not None
    symbols = sorted(quotient.free_symbols, key=lambda s: s.name)
    for size in (1, 64, 2**33):
        theirs = sympy.sympify(quotient).xreplace({s: sympy.Integer(size) for s in symbols})
        assert rational_value(quotient, dict.fromkeys(symbols, size)) == Fraction(
            int(theirs.p), int(theirs.q)
        )
    poly = normal(sympy.Rational(1, 8) - n / 16)
    assert rational_value(poly, dict.fromkeys(poly.free_symbols, 4)) == Fraction(-1, 8)
    assert rational_value(poly, {n: 4}) == Fraction(-1, 8)  # the same symbol, from sympy
    other = sympy.Symbol("n")  # no assumptions: another symbol of the same name
    assert rational_value(poly, {other: 4}) is None


def test_a_symbolic_exponent_is_read_at_its_size() -> None:
    r, k = sympy.symbols("R K", integer=True, positive=True)
    expr = r**k * (2 * r - 1) / (8 * (2 * r**2 + 5 * r**k))  # a Python fixture's, as placed
    for size in (8, 4096):
        theirs = expr.xreplace({r: sympy.Integer(size), k: sympy.Integer(size)})
        found = rational_value(expr, {r: size, k: size})
        assert found == Fraction(int(theirs.p), int(theirs.q))
        assert float(found) == float(theirs)
    assert rational_value(r ** (k / 2), {r: 4, k: 3}) is None  # 4**(3/2): not read here
