"""Report strings are exactly what sympy prints, also on the fast path for polynomials."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from polynomial_strategies import SYMBOLS, polynomials

from aiscan.report.expressions import expression_text


@settings(max_examples=400, deadline=None)
@given(polynomials())
def test_polynomials_print_as_sympy_prints_them(expr: sympy.Expr) -> None:
    assert expression_text(expr) == str(expr)


@settings(max_examples=300, deadline=None)
@given(polynomials(), polynomials(), st.integers(1, 99))
def test_quotients_print_as_sympy_prints_them(
    top: sympy.Expr, bottom: sympy.Expr, number: int
) -> None:
    for expr in (
        top / bottom,
        sympy.Mul(top, sympy.Pow(number, -1, evaluate=False), evaluate=False),
    ):
        assert expression_text(expr) == str(expr)


def test_special_cases_print_as_sympy_prints_them() -> None:
    n, m = SYMBOLS[:2]
    p = SYMBOLS[5]
    half = sympy.Rational(1, 2)
    cases = [
        1 - n,
        2 - 3 * n,
        half - n,
        1 - n / 2,
        1 - n**2,
        2 - 2 * m * n,
        n - 1,
        1 - p,
        1 - p * n,
        -n - 1,
        -n / 2,
        sympy.Rational(-5, 7),
        sympy.Integer(0),
        n * p + n,
        sympy.ceiling(n / 2) * 3,
        1 / (n + 1),
        sympy.Mul(n + 1, sympy.Pow(48, -1, evaluate=False), evaluate=False),
        sympy.oo,
        sympy.Max(n, m) - 1,
    ]
    for expr in cases:
        assert expression_text(expr) == str(expr), expr
