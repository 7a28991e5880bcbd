"""Boolean selections `x[mask]` (issue 15) against brute force: for concrete data with a known
number k of selected elements, each count with its fraction p_L<line> set to k/N must equal
the operations a plain-Python run of the same definition performs, counted one by one."""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import sympy

from aiscan.analysis.kernel import FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "selections.py"

_OPS: Counter[str] = Counter()


class Counted(float):
    """A float that counts every arithmetic operation done on it (MODEL.md's FLOPs)."""

    def _do(self, name: str, result: float) -> Counted:
        _OPS[name] += 1
        return Counted(result)

    def __add__(self, other: float) -> Counted:  # type: ignore[override]
        return self._do("add", float(self) + float(other))

    __radd__ = __add__

    def __sub__(self, other: float) -> Counted:  # type: ignore[override]
        return self._do("sub", float(self) - float(other))

    def __rsub__(self, other: float) -> Counted:  # type: ignore[override]
        return self._do("sub", float(other) - float(self))

    def __mul__(self, other: float) -> Counted:  # type: ignore[override]
        return self._do("mul", float(self) * float(other))

    __rmul__ = __mul__

    def __truediv__(self, other: float) -> Counted:  # type: ignore[override]
        return self._do("div", float(self) / float(other))


def _reduce(values: Sequence[Counted], combine: Callable[[Counted, Counted], Counted]) -> Counted:
    """A reduction of k values: k - 1 combines (NumPy's pairwise sum does as many)."""
    return functools.reduce(combine, values)


def _select(values: Sequence[float], mask: Sequence[bool]) -> list[Counted]:
    return [Counted(v) for v, keep in zip(values, mask, strict=True) if keep]


# The fixture's definitions, written again over plain lists: masks are 0 FLOPs.
def _positive_sum(x: list[float]) -> object:
    return _reduce(_select(x, [v > 0 for v in x]), operator.add)


def _masked_scale_sum(x: list[float], y: list[float]) -> object:
    m = [a > b for a, b in zip(x, y, strict=True)]
    return _reduce([v * 2.0 for v in _select(x, m)], operator.add)


def _selected_mean(x: list[float], y: list[float]) -> object:
    both = [a > 0.0 and b < 1.0 for a, b in zip(x, y, strict=True)]
    differences = [a - b for a, b in zip(_select(x, both), _select(y, both), strict=True)]
    return _reduce(differences, operator.add) / len(differences)


def _selected_dot(x: list[float], y: list[float]) -> object:
    m = [a > b for a, b in zip(x, y, strict=True)]
    products = [a * b for a, b in zip(_select(x, m), _select(y, m), strict=True)]
    return _reduce(products, operator.add)


def _matrix_mask_sum(A: list[list[float]]) -> object:
    flat = [v for row in A for v in row]
    return _reduce(_select(flat, [v > 0.0 for v in flat]), operator.add)


def _kept_rows_weighted(A: list[list[float]], keep: list[float], w: list[float]) -> object:
    rows = [row for row, k in zip(A, keep, strict=True) if k > 0.5]
    weighted = [Counted(a) * b for row in rows for a, b in zip(row, w, strict=True)]
    return _reduce(weighted, operator.add)


def _store_then_read(x: list[float], y: list[float]) -> object:
    m = [a > b for a, b in zip(x, y, strict=True)]
    doubled = iter([v * 2.0 for v in _select(y, m)])
    x = [next(doubled) if keep else v for v, keep in zip(x, m, strict=True)]
    return _reduce(_select(x, m), operator.add)


_RNG = np.random.default_rng(15)
_N, _M = 12, 5
_X = [float(v) for v in _RNG.normal(size=_N)]
_Y = [float(v) for v in _RNG.normal(size=_N)]
_A = [[float(v) for v in row] for row in _RNG.normal(size=(_N, _M))]
_KEEP = [float(v) for v in _RNG.uniform(size=_N)]
_W = [float(v) for v in _RNG.normal(size=_M)]


def _share(mask: Sequence[bool]) -> sympy.Rational:
    return sympy.Rational(sum(mask), len(mask))


_CASES = {
    "positive_sum": (lambda: _positive_sum(_X), [v > 0 for v in _X]),
    "masked_scale_sum": (
        lambda: _masked_scale_sum(_X, _Y),
        [a > b for a, b in zip(_X, _Y, strict=True)],
    ),
    "selected_mean": (
        lambda: _selected_mean(_X, _Y),
        [a > 0.0 and b < 1.0 for a, b in zip(_X, _Y, strict=True)],
    ),
    "selected_dot": (
        lambda: _selected_dot(_X, _Y),
        [a > b for a, b in zip(_X, _Y, strict=True)],
    ),
    "matrix_mask_sum": (lambda: _matrix_mask_sum(_A), [v > 0.0 for row in _A for v in row]),
    "kept_rows_weighted": (
        lambda: _kept_rows_weighted(_A, _KEEP, _W),
        [k > 0.5 for k in _KEEP],
    ),
    "store_then_read": (
        lambda: _store_then_read(_X, _Y),
        [a > b for a, b in zip(_X, _Y, strict=True)],
    ),
}


@functools.cache
def _fixture() -> dict[str, FunctionAnalysis]:
    module = lower_source(FIXTURE.read_text(), str(FIXTURE), PipelineOptions())
    return {f.function.name: f for f in analyze_module(module).functions}


def _at_data(expression: sympy.Expr, share: sympy.Rational) -> sympy.Expr:
    """`expression` at n = 12, m = 5 and every fraction p_L<line> = the share selected."""
    values = {"n": _N, "m": _M}
    return expression.subs(
        {s: share if s.name.startswith("p_L") else values[s.name] for s in expression.free_symbols}
    )


@pytest.mark.parametrize("name", sorted(_CASES))
def test_flops_at_the_selected_share_equal_brute_force(name: str) -> None:
    run, mask = _CASES[name]
    assert 0 < sum(mask) < len(mask), "the data must select some elements, not all"
    _OPS.clear()
    run()
    counted = sum(_OPS.values())
    analysis = _fixture()[name]
    assert _at_data(analysis.flops.total, _share(mask)) == counted, (name, dict(_OPS))
    for kind in ("add", "sub", "mul", "div"):
        assert _at_data(getattr(analysis.flops, kind), _share(mask)) == _OPS[kind], (name, kind)


def test_every_selection_names_its_fraction_once_per_mask() -> None:
    """A named mask's fraction is named after the line binding it, so a masked store and a
    selection by it share one symbol; inline masks are named after their own line."""
    functions = _fixture()
    symbols = {
        name: sorted({u.symbol for u in functions[name].unknowns if u.symbol})
        for name in ("positive_sum", "masked_scale_sum", "store_then_read", "selected_mean")
    }
    assert symbols == {
        "positive_sum": ["p_L7"],
        "masked_scale_sum": ["p_L11"],
        "store_then_read": ["p_L47"],
        "selected_mean": ["p_L25"],
    }


def test_packed_arrays_are_as_large_as_numpy_makes_them() -> None:
    """The eager view writes what NumPy allocates: the bool mask (1 byte an element), the
    gathered copy (k elements) and the result; `return x[x > 0.5]` is k elements."""
    x = np.array(_X)
    mask = x > 0.5
    k = int(mask.sum())
    share = sympy.Rational(k, _N)
    gather = _fixture()["gather"]
    assert _at_data(gather.traffic["eager"].write_bytes, share) == mask.nbytes + x[mask].nbytes
    for view in ("compulsory", "streaming", "fused", "jit"):
        assert _at_data(gather.traffic[view].write_bytes, share) == x[mask].nbytes, view
    positive = x > 0
    selected = x[positive]
    total = np.float64(selected.sum())
    eager = _fixture()["positive_sum"].traffic["eager"].write_bytes
    assert _at_data(eager, _share(list(positive))) == (
        positive.nbytes + selected.nbytes + total.nbytes
    )
    rows = np.array(_KEEP) > 0.5
    kept = np.array(_A)[rows]
    assert kept.shape == (int(rows.sum()), _M)  # a 1-d mask selects whole rows
    weighted = _fixture()["kept_rows_weighted"].traffic["eager"].write_bytes
    # the mask, the gathered rows, their product with w, and the sum
    assert _at_data(weighted, _share(list(rows))) == rows.nbytes + 2 * kept.nbytes + 8


def test_streaming_reads_the_mask_everywhere_and_the_values_where_selected() -> None:
    """Streaming, traced by hand over `m = x > y; return (x[m] * 2.0).sum()`: the first
    statement reads x and y and writes m at every element, the second reads m at every
    element and x where m holds, then the scalar result is written."""
    moved = 0
    m = [a > b for a, b in zip(_X, _Y, strict=True)]
    for _ in range(_N):
        moved += 8 + 8 + 1  # x[i], y[i] read, m[i] written
    for keep in m:
        moved += 1 + (8 if keep else 0)  # m[i]; x[i] when selected
    moved += 8  # the returned sum
    streaming = _fixture()["masked_scale_sum"].traffic["streaming"]
    assert _at_data(streaming.total(False), _share(m)) == moved


def test_selections_that_cannot_be_lined_up_are_located_unknowns() -> None:
    functions = _fixture()
    for name, words in (
        ("rows_summed_along_axis", "along some axes"),
        ("stored_into_slice", "data-dependent length"),
        ("beside_full_array", "data-dependent length"),
        ("two_masks", "two masks"),
        ("selection_length", "len(x[x > 0.0])"),
        ("selection_size", "of a boolean selection"),
    ):
        analysis = functions[name]
        assert analysis.flops.total == 0
        assert [u.kind.value for u in analysis.unknowns] == ["unsupported"], name
        assert words in analysis.unknowns[0].message, (name, analysis.unknowns[0].message)


def test_selection_bytes_follow_the_views() -> None:
    """`kept = x[x > 0.0]; return np.sum(kept)`: compulsory writes kept once (p*n) and
    reads it back from the cache; jit never materializes it (it does not escape)."""
    analysis = _fixture()["packed_then_summed"]
    n, p = sympy.Symbol("n"), sympy.Symbol("p_L20")

    def plain(e: sympy.Expr) -> sympy.Expr:
        return e.subs({s: sympy.Symbol(s.name) for s in e.free_symbols})

    assert sympy.expand(plain(analysis.traffic["compulsory"].write_bytes) - (8 * n * p + 8)) == 0
    assert sympy.expand(plain(analysis.traffic["jit"].total(False)) - (8 * n + 8)) == 0
    assert sympy.expand(plain(analysis.traffic["streaming"].read_bytes) - (8 * n + 8 * n * p)) == 0
