"""Substitutions by `xreplace` where it gives what `subs` gives, `subs` where the two could
differ (`aiscan.substitution`): the same expression one binding after another, the same
value (expanded) for simultaneous bindings."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.frontends.python.values import substituted
from aiscan.substitution import replaced_as_subs as _replaced

n, m, k = sympy.symbols("n m k", integer=True, positive=True)
i, j = sympy.symbols("i j", integer=True)
SYMBOLS = (n, m, k, i, j)


def _expected(expression: sympy.Expr, bindings: dict, simultaneous: bool) -> sympy.Expr:
    return sympy.expand(expression.subs(bindings, simultaneous=simultaneous))


def test_a_swap_is_simultaneous() -> None:
    bindings = ((i, j), (j, i))
    assert _replaced(i - 2 * j, bindings, True) == j - 2 * i
    assert substituted(i - 2 * j, dict(bindings), simultaneous=True) == j - 2 * i


@pytest.mark.parametrize(
    ("expression", "bindings"),
    [
        (i + j, ((i, j + 1), (j, n))),  # a chain: j, brought in by i's value, is replaced
        (k, ((n, m), (k, n))),  # the same, whichever comes first in the bindings
        (sympy.floor(i / j), ((i, sympy.S.Zero), (j, sympy.S.Zero))),  # 0 before 0/0
        # `Min(1, m)` is 1 while m is still the positive symbol that i replaces next.
        (sympy.ceiling(sympy.Min(j, m) / 3), ((k, n), (j, sympy.S.One), (m, i))),
    ],
)
def test_one_binding_after_another_as_subs_takes_them(
    expression: sympy.Expr, bindings: tuple[tuple[sympy.Symbol, sympy.Expr], ...]
) -> None:
    replaced = _replaced(expression, bindings, False)
    assert replaced is not None
    assert replaced == expression.subs(dict(bindings))


def test_classes_that_substitute_their_own_way_are_left_to_subs() -> None:
    piecewise = sympy.Piecewise((i, i < n), (n, True))
    assert _replaced(piecewise, ((i, n + 1),), True) is None
    assert _replaced(sympy.Sum(i, (i, 0, n)), ((n, m),), True) is None
    assert _replaced(sympy.floor(i / 2) + sympy.Min(i, n), ((i, n + 1),), True) is not None


def test_no_binding_of_the_expression_s_symbols_is_the_expression() -> None:
    expression = n * m + 1
    assert _replaced(expression, ((k, n),), False) is expression


_ATOMS = st.sampled_from(SYMBOLS) | st.integers(-3, 3).map(sympy.Integer)


def _combined(children: st.SearchStrategy[sympy.Expr]) -> st.SearchStrategy[sympy.Expr]:
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        pairs.map(lambda p: sympy.Min(*p)),
        pairs.map(lambda p: sympy.Max(*p)),
        children.map(lambda c: sympy.floor(c / 2)),
        children.map(lambda c: sympy.ceiling(c / 3)),
        children.map(lambda c: c**2),
    )


EXPRESSIONS = st.recursive(_ATOMS, _combined, max_leaves=8)
VALUES = st.one_of(_ATOMS, st.tuples(_ATOMS, _ATOMS).map(lambda p: p[0] + 2 * p[1]))
BINDINGS = st.dictionaries(st.sampled_from(SYMBOLS), VALUES, max_size=3)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS, BINDINGS, st.booleans())
def test_xreplace_gives_what_subs_gives(
    expression: sympy.Expr, bindings: dict, simultaneous: bool
) -> None:
    replaced = _replaced(expression, tuple(bindings.items()), simultaneous)
    if replaced is None:
        return
    if simultaneous:
        assert sympy.expand(replaced) == _expected(expression, bindings, simultaneous)
    else:  # the very expression `subs` builds, not only its value
        assert replaced == expression.subs(bindings)


def test_sizes_as_python_integers_are_placed_as_subs_places_them() -> None:
    from aiscan.substitution import substituted as placed

    expression = sympy.floor((n - 1) / k) * m + sympy.Min(n, m)
    assert placed(expression, {n: 4096, k: 3}) == expression.subs({n: 4096, k: 3})


def test_a_key_bound_twice_is_bound_as_its_last_binding() -> None:
    assert _replaced(n + 1, ((n, m), (n, n)), False) == n + 1
    assert _replaced(n + 1, ((n, n), (n, m)), True) == m + 1


NUMBERS = st.dictionaries(st.sampled_from(SYMBOLS), st.integers(-3, 40), min_size=5)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS, NUMBERS)
def test_numbers_for_every_symbol_give_subs_s_number(expression: sympy.Expr, numbers: dict) -> None:
    """Every symbol bound to a number (`n`, `m`, `k` positive: a number below 1 disagrees
    and goes to `subs`): the number `subs` gives, read without rebuilding the expression
    (`_number_at`) wherever the numbers agree with the assumptions."""
    from aiscan.substitution import _number_at
    from aiscan.substitution import substituted as placed

    expected = expression.subs(numbers)
    assert placed(expression, numbers) == expected
    fast = _number_at(expression, numbers)
    agree = all(numbers[s] >= 1 for s in (n, m, k))
    assert (fast is not None) == (agree and expected.is_Rational)
    if fast is not None:
        assert sympy.srepr(fast) == sympy.srepr(expected)


def test_a_number_against_the_assumptions_is_left_to_subs() -> None:
    """`subs` binds one symbol after another: `Min(1, m)` is 1 while `m` is still the
    positive symbol, so `m = 0` (against its assumptions) does not reach the `Min`."""
    from aiscan.substitution import _number_at
    from aiscan.substitution import substituted as placed

    expression = sympy.Min(n, m) + k
    numbers = {n: 1, m: 0, k: 2}
    assert _number_at(expression, numbers) is None
    assert placed(expression, numbers) == expression.subs(numbers)
    assert _number_at(expression, {n: 1, m: 5, k: 2}) == 3
    assert _number_at(expression, {n: 1, m: 5}) is None  # k stays
    assert _number_at(n / (m - 5), {n: 1, m: 5}) is None  # 1/0: `subs`'s zoo
