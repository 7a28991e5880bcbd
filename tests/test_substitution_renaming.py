"""A view's coordinates renamed to a nest's fresh loop variables (`values.substituted`):
the numbers substituted first (remembered), then the renaming as a rebuild that leaves
each `Mod`, `floor` and `ceiling` as it stands. It must give the very expression (srepr)
the whole substitution gives, and fall back to it wherever the renaming is no bijection
between symbols of the same assumptions."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.frontends.python import values
from aiscan.frontends.python.symbols import loop_symbol, size_symbol
from aiscan.frontends.python.values import coordinate, substituted

C0, C1, C2, C3 = (coordinate(d) for d in range(4))
Q, N, H = size_symbol("q_d3"), size_symbol("cos_d1"), size_symbol("h")
FRESH = tuple(loop_symbol(f"_i{k}") for k in (2, 6, 8, 70, 72))


def _whole(expression: sympy.Expr, bindings: dict) -> sympy.Expr:
    return values._substituted(expression, tuple(bindings.items()), False)


def test_a_rotary_embeddings_index_is_the_whole_substitutions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`cos[t, d % (size/2)]` read at a fresh nest's variables (torch_llama's `rotate`)."""
    index = sympy.Mod(C1 * Q / 2 + C2 * Q / 2 + C3, N)
    bindings = {C0: sympy.S.Zero, C1: FRESH[3], C2: sympy.S.Zero, C3: FRESH[4]}
    rebuilt: list[sympy.Basic] = []
    renamed_by = values._renamed

    def renaming(expression: sympy.Basic, *rest: object) -> sympy.Basic:
        rebuilt.append(expression)
        return renamed_by(expression, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(values, "_renamed", renaming)
    values._substituted_renaming.cache_clear()
    renamed = substituted(index, bindings)
    assert sympy.Mod(C1 * Q / 2 + C3, N) in rebuilt  # the numbers' result, renamed
    assert sympy.srepr(renamed) == sympy.srepr(_whole(index, bindings))
    assert renamed == sympy.Mod(FRESH[3] * Q / 2 + FRESH[4], N)


def test_the_numbers_are_substituted_once_for_every_renaming() -> None:
    index = sympy.floor((C0 + 3 * C1) / H) + sympy.ceiling(C1 / 2)
    values._substituted.cache_clear()
    for first, second in ((FRESH[0], FRESH[1]), (FRESH[2], FRESH[3])):
        bindings = {C0: first, C1: second, C2: sympy.S.Zero}
        assert sympy.srepr(substituted(index, bindings)) == sympy.srepr(_whole(index, bindings))
    # The numbers alone (C2 at 0: not in the index, kept as given) are one entry, reused;
    # each whole substitution made for the comparison is one more.
    assert values._substituted.cache_info().hits >= 1


def test_what_is_no_renaming_is_substituted_whole() -> None:
    """A size for a coordinate (other assumptions), two coordinates to one variable, a
    variable the expression already holds: each goes the whole way."""
    index = sympy.Mod(C0 + 2 * C1, N) + C0 * FRESH[0]
    for bindings in (
        {C0: H, C1: FRESH[1]},
        {C0: FRESH[1], C1: FRESH[1]},
        {C0: FRESH[0], C1: FRESH[1]},
        {C0: FRESH[1] + 1, C1: FRESH[2]},
    ):
        assert sympy.srepr(substituted(index, bindings)) == sympy.srepr(_whole(index, bindings))


_LEAVES = st.sampled_from((C0, C1, C2, C3, Q, N, H)) | st.integers(-3, 3).map(sympy.Integer)


_MODULI = st.sampled_from((Q, N, H, sympy.Integer(2), sympy.Integer(3)))


def _combined(children: st.SearchStrategy[sympy.Expr]) -> st.SearchStrategy[sympy.Expr]:
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        st.tuples(children, _MODULI).map(lambda p: sympy.Mod(*p)),
        children.map(lambda c: c * Q / 2),
        children.map(lambda c: sympy.floor(c / H)),
        children.map(lambda c: sympy.ceiling(c / 3)),
        children.map(lambda c: c**2),
    )


_EXPRESSIONS = st.recursive(_LEAVES, _combined, max_leaves=8)
_VALUES = st.sampled_from(FRESH) | st.integers(-2, 2).map(sympy.Integer)
_BINDINGS = st.dictionaries(st.sampled_from((C0, C1, C2, C3)), _VALUES, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(_EXPRESSIONS, _BINDINGS)
def test_the_renaming_gives_the_whole_substitutions_expression(
    expression: sympy.Expr, bindings: dict
) -> None:
    renamed = substituted(expression, bindings)
    assert sympy.srepr(renamed) == sympy.srepr(_whole(expression, bindings))


def test_python_integers_among_the_values_are_substituted_whole() -> None:
    index = sympy.floor((C0 + 3 * C1) / H)
    bindings = {C0: 2, C1: FRESH[0]}
    assert sympy.srepr(substituted(index, bindings)) == sympy.srepr(_whole(index, bindings))
