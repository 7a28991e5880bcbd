"""The limit of an intensity whose sizes also divide (`width/heads`), every size grown
together (`intensity._limit_by_growth`): read off the leading powers of the growth
symbol where both sides are sums of rational multiples of its powers, and what sympy's
`limit` gives there, to the expression (srepr)."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis import intensity
from aiscan.frontends.python.symbols import size_symbol

B, T, WIDTH, HEADS = (size_symbol(name) for name in ("b", "t", "width", "heads"))
SIZES = [B, HEADS, T, WIDTH]


def _sympys(numerator: sympy.Expr, denominator: sympy.Expr) -> sympy.Expr | None:
    growth = {s: intensity._GROWTH for s in SIZES}
    ratio = numerator.subs(growth) / denominator.subs(growth)
    return sympy.limit(ratio, intensity._GROWTH, sympy.oo)


def test_attention_ratios_are_sympys_limits() -> None:
    """Three of `torch_llama.py`'s, as its hover asks for them: an infinite one, a finite
    one, and one that vanishes."""
    cases = [
        (
            2 * B * T * WIDTH**2 - B * T * WIDTH + 4 * B * T * WIDTH**2 / HEADS,
            8 * B * T * WIDTH + 8 * B * T * WIDTH / HEADS + 4 * WIDTH**2,
        ),
        (
            3 * HEADS * T + HEADS + 4 * T * WIDTH + 8 * WIDTH**2 + 2 * WIDTH / HEADS,
            12 * T * WIDTH + 32 * WIDTH**2 + 108 * WIDTH + 56 * WIDTH / HEADS,
        ),
        (WIDTH / HEADS + 1, B * T * WIDTH - 3),
    ]
    found = [intensity._limit_by_growth(top, bottom, SIZES) for top, bottom in cases]
    assert found == [sympy.oo, sympy.Rational(15, 44), sympy.S.Zero]
    for (top, bottom), limit in zip(cases, found, strict=True):
        assert sympy.srepr(limit) == sympy.srepr(_sympys(top, bottom))


_FACTORS = st.lists(st.sampled_from([*SIZES, 1 / HEADS, 1 / T]), max_size=3)
_TERMS = st.tuples(st.integers(-4, 4).filter(bool), _FACTORS).map(
    lambda t: t[0] * sympy.Mul(*t[1]) / 2
)
_SIDES = st.lists(_TERMS, min_size=1, max_size=4).map(lambda terms: sympy.Add(*terms))


@settings(max_examples=200, deadline=None)
@given(_SIDES, _SIDES)
def test_the_leading_powers_give_sympys_limit(top: sympy.Expr, bottom: sympy.Expr) -> None:
    if bottom.subs({s: intensity._GROWTH for s in SIZES}) == 0:
        return
    assert sympy.srepr(intensity._limit_by_growth(top, bottom, SIZES)) == sympy.srepr(
        _sympys(top, bottom)
    )


def test_other_symbols_are_left_to_sympy() -> None:
    fraction = sympy.Symbol("p", positive=True)
    assert intensity._leading_power(fraction * intensity._GROWTH) is None
    assert intensity._leading_power(sympy.sqrt(intensity._GROWTH)) is None
