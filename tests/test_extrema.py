"""`Min`/`Max` that keep their order over a loop's range are resolved before summing, so
sums over triangular working sets close (they stayed unevaluated `Sum`s over internal
counters, after seconds of sympy's summation)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import sympy

from aiscan.analysis import domain
from aiscan.analysis.domain import Bounds, sum_over_loop
from aiscan.analysis.extrema import resolve_extrema
from aiscan.analysis.kernel import analyze_module
from aiscan.cli import main
from aiscan.ir.symbols import loop_symbol, size_symbol
from aiscan.options import PipelineOptions
from aiscan.pipeline import lower_source
from aiscan.roofline.devices import load_devices
from aiscan.roofline.hierarchy import device_cache_traffic

ROOT = Path(__file__).resolve().parent.parent
TRIANGLES = ROOT / "fixtures" / "c" / "polyhedral_footprints.c"
n, m = size_symbol("n"), size_symbol("m")
i, j = loop_symbol("i"), loop_symbol("j")
t = sympy.Symbol("_aiscan_t1", integer=True, nonnegative=True)


@pytest.mark.parametrize(
    ("expr", "trip", "resolved"),
    [
        (sympy.Min(t, n - 1), n, t),  # t <= n - 1 on the whole range
        (sympy.Max(t, n - 1), n, n - 1),
        (sympy.Min(i, t - 1), i, t - 1),  # t < i: the range runs only when i >= 1
        (sympy.Max(t, i), i + 1, i),  # t <= i
        (sympy.Min(t, m - 1), n, sympy.Min(t, m - 1)),  # n against m: undecided, kept
        (sympy.Min(t, n - 5), n, sympy.Min(t, n - 5)),  # crosses over inside the range
        (sympy.Min(t**2, n), n, sympy.Min(t**2, n)),  # not linear in the counter: kept
    ],
)
def test_resolution(expr: sympy.Expr, trip: sympy.Expr, resolved: sympy.Expr) -> None:
    assert resolve_extrema(expr, t, trip) == resolved


SUMMANDS = [
    sympy.Min(j, n - 1),
    8 * sympy.Max(j, i) - 8 * sympy.Min(j, i) + 256,
    72 * j - 64 * sympy.Min(i, j - 1) + 128,
    sympy.Min(j, n - 5) + j,  # undecided: stays a sum, which must still be right
]


@pytest.mark.parametrize("summand", SUMMANDS, ids=str)
@pytest.mark.parametrize("inner", ["full", "below_i", "to_i"])
def test_sums_equal_brute_force(summand: sympy.Expr, inner: str) -> None:
    """sum over i < n, then j over the inner range, at every n where the loops run."""
    trip = {"full": n, "below_i": i, "to_i": i + 1}[inner]
    outer = Bounds("i", sympy.Integer(0), 1, n)
    inner_sum = sum_over_loop(summand, Bounds("j", sympy.Integer(0), 1, trip), 1, [outer])
    total = sum_over_loop(inner_sum, outer, level=0)
    for size in range(1, 9):
        brute = sum(
            summand.subs({i: a, j: b, n: size})
            for a in range(size)
            for b in range(int(trip.subs({i: a, n: size})))
        )
        assert sympy.simplify(total.subs(n, size).doit()) == brute, (size, total)


@pytest.mark.parametrize("summand", SUMMANDS[:3], ids=str)
def test_decided_sums_close(summand: sympy.Expr) -> None:
    outer = Bounds("i", sympy.Integer(0), 1, n)
    for trip in (n, i, i + 1):
        inner_sum = sum_over_loop(summand, Bounds("j", sympy.Integer(0), 1, trip), 1, [outer])
        total = sum_over_loop(inner_sum, outer, level=0)
        crossing = trip == n and summand != SUMMANDS[0]  # i against j over a square
        assert total.has(sympy.Sum) == crossing, (trip, total)


def test_triangular_cache_traffic_prints_no_internal_counter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["analyze", str(TRIANGLES), "--no-cache", "--device", "epyc-9654"])
    out = capsys.readouterr().out
    assert code == 0
    assert "_aiscan" not in out and "Sum(" not in out
    assert "cache bytes 24*n**3 + 188*n**2 - 84*n" in out  # lu, every condition broken (a bound)


def _brute(expr: sympy.Basic) -> sympy.Basic:
    """A finite sum with numeric bounds, added term by term (sympy's `doit` gives up on
    nested sums of `Min`)."""
    if isinstance(expr, sympy.Sum):
        function, *limits = expr.args
        var, low, high = limits[-1]
        inner = sympy.Sum(function, *limits[:-1]) if len(limits) > 1 else function
        return sympy.Add(*(_brute(inner.subs(var, k)) for k in range(int(low), int(high) + 1)))
    if expr.args:
        return expr.func(*(_brute(a) for a in expr.args))
    return expr


@pytest.mark.parametrize("function", ["lu", "syrk_mirror", "reversed_triangle", "zero_trip"])
def test_cache_traffic_equals_the_unresolved_sums(
    function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Level by level, the closed forms equal the sums sympy left open, at small sizes."""
    module = lower_source(TRIANGLES.read_text(), str(TRIANGLES), PipelineOptions())
    analysis = next(f for f in analyze_module(module).functions if f.function.name == function)
    device = load_devices().get("epyc-9654")

    def levels() -> list[sympy.Expr]:
        traffic = device_cache_traffic(
            [r.region.body for r in analysis.regions], device, write_allocate=True, sizes=None
        )
        assert traffic is not None
        return [level.total for level in traffic.levels]

    closed = levels()
    monkeypatch.setattr(domain, "resolve_extrema", lambda expr, *_: expr)
    open_ = levels()
    assert not any(e.has(sympy.Sum) for e in closed)
    for size in range(1, 6):
        point = {n: size, m: size + 1}
        for a, b in zip(closed, open_, strict=True):
            assert a.subs(point) == _brute(b.subs(point)), (size, a, b)


def test_every_pair_of_signs_is_consistent() -> None:
    """Replacing by the winning side never changes a value inside the range."""
    for first, second in itertools.product([t, t - 1, n - 1, n - t, sympy.Integer(3)], repeat=2):
        if first == second:
            continue
        for extremum in (sympy.Min(first, second), sympy.Max(first, second)):
            if not isinstance(extremum, (sympy.Min, sympy.Max)):
                continue
            resolved = resolve_extrema(extremum, t, n)
            for size in range(1, 7):
                for value in range(size):
                    point = {t: value, n: size}
                    assert resolved.subs(point) == extremum.subs(point), (extremum, resolved)


class _NoSympy:
    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"sympy.{name} asked")


def test_a_polynomial_has_no_extremum_to_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Poly without hinges is returned as it is, sympy never asked (issue 33: the cache
    model of lu, cholesky, syrk, trmm and gramschmidt reached sympy here)."""
    from aiscan import algebra
    from aiscan.analysis import extrema

    counter = algebra.symbol("_aiscan_t1", "trip")
    summand = 3 * counter * n + i - 1
    hinged = algebra.hinge(2 - n)
    assert hinged is not None and hinged.hinged
    resolved_hinged = resolve_extrema(hinged * counter, counter, n)
    assert resolved_hinged == sympy.Max(0, 2 - n) * t  # sympy's path: not over the counter
    monkeypatch.setattr(extrema, "sympy", _NoSympy())
    monkeypatch.setattr(algebra, "to_sympy", _NoSympy().__getattr__)
    assert resolve_extrema(summand, counter, n) is summand
