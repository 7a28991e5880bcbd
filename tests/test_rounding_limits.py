"""The infinite limit of a polynomial in x and its roundings (`floor`, `ceiling` of a
linear function of x), as a crossover's gap at a tile's count holds them
(`intensity._limit_past_roundings`): the leading term of the polynomial with each
rounding set to its argument, where that keeps the full degree, and of a ratio of two
such, the ratio of their leading terms; sympy's `limit` where the leading terms cancel
or anything else is in the expression."""

from __future__ import annotations

from fractions import Fraction
from math import ceil, floor

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis import intensity

X = sympy.Symbol("x", positive=True)

GAPS = [
    # Crossover gaps the fixtures' plot solved (`aiscan roofline fixtures/c fixtures/python`).
    "-29*ceiling(x/3 - 2/3)",
    "-21693*ceiling(x/8 - 1/4)/67",
    "-80*x**4 + 18*x**3*floor(x/2 - 1/2)**2 + 36*x**3*floor(x/2 - 1/2) + 18*x**3"
    " - 81*x**2*floor(x/2 - 1/2)**2 - 162*x**2*floor(x/2 - 1/2) - 801*x**2",
    "-43*x*floor(x/2)/2 - 10*x - 10*ceiling(x/2) - 23*floor(x/2)",
    "x*ceiling(x/65536) - 26396*x/67 - 4770/67",
    "-5373*x*ceiling(x/3)/67 + 16119*ceiling(x/3)**2/134 - 37879*ceiling(x/3)/134",
    "32506/67 - 32506*ceiling(x/2)/67",
]

RATIOS = [
    # Ratios: the first an intensity's limit the fixtures' plot took with sympy.
    "(2*x - 3*ceiling(x/3) + 3)/(16*(2*x - 3*ceiling(x/3) + 7))",
    "floor(x/2)/(x + 1)",
    "ceiling(x/2)/(x - ceiling(x/3))",
    "x*floor(x/4)/(3*x**2 + ceiling(x/5))",
    "(x + 1)/(x*ceiling(x/7))",
]


@pytest.mark.parametrize("text", GAPS + RATIOS)
def test_the_fixtures_plot_limits_are_sympys(text: str) -> None:
    """The crossover gaps' limits are infinite; the ratios' finite."""
    expr = sympy.sympify(text, locals={"x": X})
    found = intensity._limit_past_roundings(expr, X)
    assert found is not None
    assert found == sympy.limit(expr, X, sympy.oo)
    assert (found in (sympy.oo, -sympy.oo)) == (text in GAPS)
    assert intensity.limit_at_infinity(expr, X) == found


@pytest.mark.parametrize(
    "expr",
    [
        "2*floor(x/2) - x",  # the leading terms cancel: the parity decides, no limit
        "x - floor(x)",
        "3*ceiling(x/3) - x + 5",
        "p*floor(x/2) - x",  # another symbol
        "floor(floor(x/2)/3)",  # a rounding of a rounding
        "floor(x**2/2) - x",  # a rounding of a square
        "(x - 2*floor(x/2))/(x + 1)",  # a ratio whose top's leading terms cancel
        "x**2 + 3",  # no rounding: the polynomial path's
    ],
)
def test_left_to_sympy_where_the_rule_cannot_tell(expr: str) -> None:
    parsed = sympy.sympify(expr, locals={"x": X, "p": sympy.Symbol("p", positive=True)})
    assert intensity._limit_past_roundings(parsed, X) is None


def _exact(expr: sympy.Expr, value: int) -> Fraction:
    """The expression at x = value, in exact arithmetic (each rounding exact)."""
    if expr.is_Number:
        return Fraction(str(expr))
    if expr == X:
        return Fraction(value)
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        inner = _exact(expr.args[0], value)
        return Fraction(floor(inner) if isinstance(expr, sympy.floor) else ceil(inner))
    parts = [_exact(a, value) for a in expr.args]
    if expr.is_Add:
        return sum(parts, Fraction(0))
    if expr.is_Mul:
        product = Fraction(1)
        for part in parts:
            product *= part
        return product
    if expr.is_Pow:
        return parts[0] ** int(expr.args[1])
    raise AssertionError(expr)


_RATIONALS = st.fractions(min_value=-5, max_value=5, max_denominator=4)
_ROUNDING = st.tuples(
    st.sampled_from([sympy.floor, sympy.ceiling]),
    _RATIONALS.filter(lambda a: a != 0),
    _RATIONALS,
)


@settings(max_examples=120, deadline=None)
@given(
    roundings=st.lists(_ROUNDING, min_size=1, max_size=2),
    terms=st.lists(
        st.tuples(_RATIONALS.filter(lambda c: c != 0), st.integers(0, 2), st.integers(0, 2)),
        min_size=1,
        max_size=4,
    ),
)
def test_an_infinite_limit_is_where_the_values_go(
    roundings: list[tuple[type, Fraction, Fraction]], terms: list[tuple[Fraction, int, int]]
) -> None:
    """Wherever the rule answers, the expression's exact values at x = 10**6, 10**9 and
    10**12 have its sign and grow without bound (a hundred times and more each step)."""
    atoms = [kind(sympy.Rational(a) * X + sympy.Rational(b)) for kind, a, b in roundings]
    expr = sympy.Add(
        *(
            sympy.Rational(c) * X**p * atoms[k % len(atoms)] ** q
            for k, (c, p, q) in enumerate(terms)
        )
    )
    found = intensity._limit_past_roundings(expr, X)
    if found is None:
        return
    values = [_exact(expr, 10**k) for k in (6, 9, 12)]
    sign = 1 if found == sympy.oo else -1
    assert all(sign * v > 0 for v in values)
    assert abs(values[1]) >= 1000 * abs(values[0]) / 10 and abs(values[2]) > abs(values[1])
