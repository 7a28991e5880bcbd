"""Exact values at integer points (`analysis.point_values`), and the cache model's use of
them: a working set sure to keep a free tile size is not handed to sympy at every size."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from golden import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.algebra import constant, hinge, to_sympy
from aiscan.analysis import cache_model
from aiscan.analysis.cache_model import CacheLevelSpec, cache_traffic
from aiscan.analysis.kernel import ModuleAnalysis, analyze_module
from aiscan.analysis.point_values import NotEvaluated, point_value
from aiscan.ir.nodes import Loop
from aiscan.ir.symbols import loop_symbol, size_symbol
from aiscan.options import PipelineOptions
from aiscan.pipeline import lower_source

n, bs = size_symbol("n"), size_symbol("bs")
t = loop_symbol("t")


def test_lattice_functions_take_sympys_values() -> None:
    expr = 8 * n * sympy.Min(bs, n - bs * t) + sympy.Max(0, 4 - n) + sympy.ceiling(n / bs)
    points = ({"n": 33, "bs": 8, "t": 4}, {"n": 3, "bs": 5, "t": 0}, {"n": 7, "bs": 2, "t": 9})
    for values in points:
        expected = expr.subs({sympy.Symbol(k, **_assumptions(k)): v for k, v in values.items()})
        exact = point_value(expr, {k: Fraction(v) for k, v in values.items()})
        assert exact == Fraction(int(expected.p), int(expected.q)) and exact == expected


def _assumptions(name: str) -> dict[str, bool]:
    return {"integer": True} if name == "t" else {"integer": True, "positive": True}


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 50),
    st.integers(1, 50),
    st.integers(-5, 20),
    st.sampled_from(["floor", "ceiling"]),
)
def test_values_equal_sympys_substitution(
    size: int, block: int, counter: int, rounding: str
) -> None:
    rounded = getattr(sympy, rounding)((n - 1) / bs)
    expr = sympy.Min(bs, n - bs * t) * rounded - sympy.Max(t, n - 2 * bs) ** 2
    values = {"n": size, "bs": block, "t": counter}
    expected = expr.subs({size_symbol("n"): size, size_symbol("bs"): block, t: counter})
    assert point_value(expr, {k: Fraction(v) for k, v in values.items()}) == expected


def test_what_it_does_not_read_is_said() -> None:
    with pytest.raises(NotEvaluated):
        point_value(sympy.sin(n), {"n": Fraction(1)})
    with pytest.raises(NotEvaluated):
        point_value(n + bs, {"n": Fraction(1)})  # bs has no value


def test_a_free_tile_size_that_moves_the_working_set_is_seen_without_sympy() -> None:
    """`8*n*Min(bs, n - bs*t)` at n = 33, at the last tile: bs stays free whatever t is,
    so no caller can get a number; sympy's answer keeps bs too."""
    tile = _tile_loop()
    counter = loop_symbol(tile.var)  # t_L23, from 0 to ceiling(n/bs) - 1
    expr = 8 * n * sympy.Min(bs, n - bs * counter)
    assert cache_model._keeps_unbound(expr, (tile,), {"n": 33}, None)
    full = cache_model._worst_over_loops(cache_model._at_sizes(expr, {"n": 33}), (tile,), {"n": 33})
    assert bs in full.free_symbols
    # At a given tile size everything is bound: sympy evaluates it, to the same number.
    assert not cache_model._keeps_unbound(expr, (tile,), {"n": 33, "bs": 8}, None)


def test_a_free_symbol_the_points_cannot_move_is_left_to_sympy() -> None:
    """`Min(n, bs + 100)` at n = 33 is 33 at every probe: the check is only sufficient,
    so sympy is asked (and keeps the Min)."""
    expr = sympy.Min(n, bs + 100)
    assert not cache_model._keeps_unbound(expr, (), {"n": 33}, None)


def test_the_wanted_symbol_is_not_a_reason() -> None:
    """`_crossing` wants the working set in its own counter `t`: t alone free is no
    shortcut, bs beside it is."""
    expr = 8 * sympy.Min(size_symbol("b"), n - 8 * t)
    assert not cache_model._keeps_unbound(expr, (), {"n": 33, "b": 8}, "t")
    assert cache_model._keeps_unbound(8 * sympy.Min(bs, n - bs * t), (), {"n": 33}, "t")


def _tile_loop() -> Loop:
    """The tile loop of fixtures/c/tiled_loops.c's dgemm_tiled3, whose trip holds bs."""
    function = next(f for f in _tiled_module().functions if f.function.name == "dgemm_tiled3")
    loop = function.regions[0].region.body[0]
    assert isinstance(loop, Loop) and bs in loop.trip.free_symbols
    return loop


def _tiled_module() -> ModuleAnalysis:
    path = FIXTURES / "c" / "tiled_loops.c"
    return analyze_module(lower_source(Path(path).read_text(), str(path), PipelineOptions()))


@pytest.mark.parametrize("sizes", [{"n": 33}, {"n": 200}, {"n": 200, "bs": 16}], ids=str)
def test_tiled_cache_traffic_is_the_same_with_and_without_the_check(
    sizes: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every tiled nest's bytes and layer conditions at sizes, the tile size free or
    given: the check fires where it is free and changes nothing."""
    caches = [CacheLevelSpec("D1", 32768, 64), CacheLevelSpec("LL", 262144, 64)]
    bodies = [r.region.body for f in _tiled_module().functions for r in f.regions]

    def levels() -> list[object]:
        cache_model._worst_at.cache_clear()
        return [
            cache_traffic(body, caches, "DRAM", write_allocate=True, sizes=sizes) for body in bodies
        ]

    fired = []
    check = cache_model._keeps_unbound

    def counted(*arguments: object) -> bool:
        fired.append(check(*arguments))  # type: ignore[arg-type]
        return fired[-1]

    monkeypatch.setattr(cache_model, "_keeps_unbound", counted)
    with_check = levels()
    monkeypatch.setattr(cache_model, "_keeps_unbound", lambda *arguments: False)
    without = levels()
    cache_model._worst_at.cache_clear()
    assert any(fired) or "bs" in sizes
    assert with_check == without


def test_a_hinge_is_read_from_its_argument() -> None:
    """A footprint's `Max(0, 4 - n)`, a variable of the exact type: its value is the
    argument's at the point, as sympy's `Max` gives it; a path's rational reading
    (`lattice=False`) leaves it to sympy."""
    hinged = hinge(constant(4) - n)
    assert hinged is not None
    expr = 8 * n - 8 * hinged
    for size in (1, 3, 4, 9):
        expected = to_sympy(expr).subs(size_symbol("n"), size)
        assert point_value(expr, {"n": Fraction(size)}) == expected
    with pytest.raises(NotEvaluated):
        point_value(expr, {"n": Fraction(2)}, lattice=False)
