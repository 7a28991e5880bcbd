"""The footprint's sympy-free shortcuts hold to sympy: the rank of a subscripts' integer
matrix, and the larger or smaller of two bounds that differ by a number (a box's
intersection takes them as `_highest` and `_lowest` do)."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.algebra import constant
from aiscan.analysis.footprint import _highest, _lowest, _numeric_rank, _symbolic_rank
from aiscan.ir.symbols import loop_symbol, size_symbol

_MATRICES = st.integers(1, 4).flatmap(
    lambda columns: st.lists(
        st.lists(st.integers(-3, 3), min_size=columns, max_size=columns), min_size=1, max_size=4
    )
)


@settings(max_examples=200, deadline=None)
@given(_MATRICES)
def test_rank_is_sympys(rows: list[list[int]]) -> None:
    entries = [
        [constant(v) if (i + j) % 2 else v for j, v in enumerate(r)] for i, r in enumerate(rows)
    ]
    assert _numeric_rank(entries) == sympy.Matrix(rows).rank()


def test_a_symbolic_entry_is_left_to_sympy() -> None:
    assert _numeric_rank([[size_symbol("n"), 1]]) is None


_N, _M = size_symbol("n"), size_symbol("m")
_ENTRIES = st.sampled_from(
    [0, 1, -1, 2, _N, -_N, _M, _N * _M, _N + 1, 2 * _N, sympy.floor(_N / _M), _N - _M]
)
_SYMBOLIC = st.integers(1, 4).flatmap(
    lambda columns: st.lists(
        st.lists(_ENTRIES, min_size=columns, max_size=columns), min_size=1, max_size=4
    )
)


@settings(max_examples=150, deadline=None)
@given(_SYMBOLIC)
def test_a_symbolic_rank_is_sympys(rows: list[list[sympy.Expr]]) -> None:
    """Linearized subscripts (`i*n + j`) give a matrix of sizes: its rank over rational
    functions of them is `Matrix.rank`'s, without `simplify`."""
    assert _symbolic_rank(rows) == sympy.Matrix(rows).rank()


@settings(max_examples=100, deadline=None)
@given(st.integers(-5, 5), st.integers(-5, 5))
def test_bounds_a_number_apart_are_sympys_max_and_min(a: int, b: int) -> None:
    i, n = loop_symbol("i"), size_symbol("n")
    low, high = i + n + a, i + n + b
    assert _highest((low, high)) == sympy.Max(low, high)
    assert _lowest((low, high)) == sympy.Min(low, high)
