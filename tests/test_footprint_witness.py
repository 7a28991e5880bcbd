"""An intersection of boxes that goes negative at some value of its symbols ends the
inclusion-exclusion as sympy's `Max`/`Min` of the bounds did, without building them (issue
33: lu, cholesky, syrk and trmm from PolyBench/C imported sympy there first)."""

from __future__ import annotations

import pytest

from aiscan.algebra import ONE, ZERO, expand
from aiscan.analysis import footprint
from aiscan.analysis.footprint import Box, _inclusion_exclusion, _some_intersection_negative
from aiscan.ir.symbols import loop_symbol, size_symbol

n, m = size_symbol("n"), size_symbol("m")
i, j, k = loop_symbol("i"), loop_symbol("j"), loop_symbol("k")

# PolyBench's unions: lu's `A[i][k]`/`A[k][j]` rows, cholesky's `A[i][j]`/`A[j][j]`, syrk's
# `C[i][k]`/`C[0..i][k]`, trmm's `B[i+1..m-1][j]`/`B[i][j]`, and unions whose every
# intersection is nonnegative, counted.
CASES = [
    ([Box(((ZERO, i - 1), (j, j))), Box(((i, i), (j, j)))], None),
    ([Box(((ZERO, j - 1), (j, j))), Box(((i, i), (j, j))), Box(((j, j), (j, j)))], None),
    ([Box(((i, i), (ZERO, i - 1))), Box(((i, i), (i, n - 1)))], None),
    ([Box(((i, i), (j, j))), Box(((j, j), (j, j)))], None),
    ([Box(((i, i), (k, k))), Box(((ZERO, i), (k, k)))], None),
    ([Box(((i + 1, m - 1), (j, j))), Box(((i, i), (j, j)))], None),
    ([Box(((ONE, m - 1), (ZERO, n - 1))), Box(((ZERO, m - 1), (ZERO, n - 1)))], m * n),
    ([Box(((ZERO, n - 1),)), Box(((ONE, n),))], n + 1),
    ([Box(((ZERO, n - 1), (ZERO, m - 1))), Box(((ONE, n), (ZERO, m - 1)))], n * m + m),
]


@pytest.mark.parametrize(("boxes", "union"), CASES)
def test_the_shortcut_gives_what_sympy_gives(
    monkeypatch: pytest.MonkeyPatch, boxes: list[Box], union: object
) -> None:
    shortcut = _inclusion_exclusion(boxes)
    monkeypatch.setattr(footprint, "_some_intersection_negative", lambda boxes: False)
    with_sympy = _inclusion_exclusion(boxes)
    assert shortcut == with_sympy
    assert (shortcut is None) if union is None else expand(shortcut - union) == 0


@pytest.mark.parametrize(("boxes", "union"), [c for c in CASES if c[1] is None])
def test_an_empty_intersection_is_found_without_sympy(
    monkeypatch: pytest.MonkeyPatch, boxes: list[Box], union: object
) -> None:
    class NoSympy:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"sympy.{name} asked")

    monkeypatch.setattr(footprint, "sympy", NoSympy())
    assert _some_intersection_negative(boxes)
    assert _inclusion_exclusion(boxes) is None


def test_a_counter_of_no_sign_may_be_far_below_zero() -> None:
    # [0, i] and [0, i + 1] meet in [0, i]: negative only where the loop never runs, and
    # sympy cannot prove `i + 1 >= 0` of a counter of no sign, so both say None.
    boxes = [Box(((ZERO, i),)), Box(((ZERO, i + 1),))]
    assert _some_intersection_negative(boxes)
    assert not _some_intersection_negative([Box(((ZERO, n - 1),)), Box(((ONE, n),))])
