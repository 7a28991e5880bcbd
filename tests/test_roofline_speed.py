"""The roofline's speed work (issue 33) keeps every figure: a size path's points are placed
with the figures at their size alone, and the HTML report places each kernel once."""

from __future__ import annotations

from typing import Any

import pytest
from golden import FIXTURES

from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.options import PlacementOptions
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.roofline import html, kernels, placement
from aiscan.roofline.devices import load_devices
from aiscan.roofline.html import render_html
from aiscan.roofline.kernels import module_kernels
from aiscan.sources import read_source


def _kernels(fixture: str, device: str, size_range: tuple[int, int] | None = None) -> Any:
    source = FIXTURES / "c" / fixture
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    options = PlacementOptions(devices=(load_devices().get(device),), model="cache")
    return module_kernels([analyze_module(module, AnalysisOptions())], options, size_range)


def test_a_point_has_the_figures_of_the_whole_placement_without_its_symbolic_work() -> None:
    """`point` leaves out the symbolic AI, its limit and the crossover (sympy's simplify and
    root solves at every size of a sweep), never the AI or the rate at the sizes."""
    import sympy

    n = sympy.Symbol("n", positive=True, integer=True)
    h100 = load_devices().get("h100-sxm")
    flops, moved = 2 * n**3, 24 * n**2 + 8 * n
    whole = placement.place(flops, moved, "fp64", h100, sizes={"n": 64})
    point = placement.place(flops, moved, "fp64", h100, sizes={"n": 64}, point=True)
    assert point.intensity is None and point.intensity_limit is None
    assert whole.intensity is not None and whole.intensity_limit is not None
    assert (
        point.intensity_flops_per_byte
        == whole.intensity_flops_per_byte
        == 2 * 64**3 / (24 * 64**2 + 8 * 64)
    )
    assert point.attainable_flops_per_s == whole.attainable_flops_per_s
    assert point.bound is whole.bound and point.times == whole.times
    # Without a value at the sizes the point is the whole placement.
    symbolic = placement.place(flops, moved, "fp64", h100, point=True)
    assert symbolic == placement.place(flops, moved, "fp64", h100)


def test_a_size_path_is_what_the_whole_placement_gives_at_each_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sweep of naive dgemm on Haswell, placed whole at each size (as before the point
    placements), and as a point: the same floats, bit for bit."""
    (fast,) = _kernels("dgemm_ijk.c", "haswell-e5-2695v3", (8, 4096))
    original = kernels._place_one

    def whole(*arguments: Any, point: bool = False) -> Any:
        return original(*arguments)

    monkeypatch.setattr(kernels, "_place_one", whole)
    (slow,) = _kernels("dgemm_ijk.c", "haswell-e5-2695v3", (8, 4096))
    assert fast.size_paths == slow.size_paths
    path = fast.size_paths["haswell-e5-2695v3"]
    assert [size for size, _, _ in path] == [2**k for k in range(3, 13)]
    assert path[0][1] == pytest.approx(8 / 16)  # n = 8: all fits, n/16 with write-allocate


def test_the_html_report_places_each_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plot and the tables of the HTML report read one set of placements (they were
    computed twice, once for each)."""
    found = _kernels("dgemm_ijk.c", "h100-sxm")
    devices = [load_devices().get("h100-sxm")]
    calls = []
    original = html.placements

    def counted(*arguments: Any, **keywords: Any) -> Any:
        calls.append(1)
        return original(*arguments, **keywords)

    monkeypatch.setattr(html, "placements", counted)
    monkeypatch.setattr("aiscan.roofline.plot.placements", counted)
    page = render_html(found, devices, sizes={"n": 512})
    assert len(calls) == 1
    assert "dgemm:7" in page


def test_every_level_shares_the_working_sets_at_the_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer conditions of each level evaluate the same working sets at the same sizes,
    and a breaking size holds at every size: both are memoized, with the traffic of the
    unmemoized computation."""
    from aiscan.analysis import cache_model
    from aiscan.analysis.kernel import analyze_module
    from aiscan.roofline.hierarchy import device_cache_traffic

    source = FIXTURES / "c" / "dgemm_ijk.c"
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    (region,) = analyze_module(module).functions[0].regions
    h100 = load_devices().get("h100-sxm")
    cache_model._worst_at.cache_clear()
    cache_model._breaking_size.cache_clear()
    sizes = {"n": 256}
    memoized = device_cache_traffic((region.region.body,), h100, write_allocate=False, sizes=sizes)
    assert cache_model._worst_at.cache_info().hits > 0  # L2 asks what L1 asked
    again = device_cache_traffic(
        (region.region.body,), h100, write_allocate=False, sizes={"n": 512}
    )
    # A breaking size is solved when read (only the JSON report reads it): the same at every size.
    breaking = [[c.breaks_at for lv in t.levels for c in lv.conditions] for t in (memoized, again)]
    assert breaking[0] == breaking[1] and any(b is not None for b in breaking[0])
    assert cache_model._breaking_size.cache_info().hits > 0
    monkeypatch.setattr(cache_model, "_worst_at", cache_model._worst_at.__wrapped__)
    monkeypatch.setattr(cache_model, "_breaking_size", cache_model._breaking_size.__wrapped__)
    assert memoized == device_cache_traffic(
        (region.region.body,), h100, write_allocate=False, sizes=sizes
    )
    assert again == device_cache_traffic(
        (region.region.body,), h100, write_allocate=False, sizes={"n": 512}
    )
    assert memoized is not None and str(memoized.levels[-1].total) == "8*n**3 + 16*n**2"


def test_a_simultaneous_substitution_binds_only_the_symbols_the_expression_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A helper's copier binds every name of the call: `subs` walked each expression once
    per binding (flax_gpt.py: 9.5 s of CPU, 3.2 s without the absent ones)."""
    import sympy

    from aiscan.frontends.python import values

    a, b, c = sympy.symbols("a b c")
    seen = []
    original = values._substituted

    def recorded(expression: Any, bindings: Any, simultaneous: bool) -> Any:
        seen.append(bindings)
        return original(expression, bindings, simultaneous)

    monkeypatch.setattr(values, "_substituted", recorded)
    bindings = {a: b, b: a, c: 7 * a}
    # Which bindings are kept, in any order: `subs` orders a dict's bindings itself.
    assert values.substituted(a + 2 * b, bindings, simultaneous=True) == b + 2 * a
    assert set(seen[-1]) == {(a, b), (b, a)}
    assert values.substituted(a * (c + 1), bindings, simultaneous=True) == 7 * a * b + b
    assert set(seen[-1]) == {(a, b), (c, 7 * a)}
    # One after another, a binding may act on what an earlier one wrote: all are kept.
    assert values.substituted(a + 1, {a: b, b: c}) == c + 1
    assert seen[-1] == ((a, b), (b, c))


def _floor_kernel_placements() -> tuple[tuple[Any, Any, Any], ...]:
    """Grouped-query attention's counts (`width // heads`), and a ratio that is 0/0 at the
    sweep's first size (a common factor `n - 8` that `simplify` cancels), on the H100, for
    the HTML report (`simplified`) and for a drawing alone."""
    import sympy

    from aiscan.roofline.plot import KernelSpec

    b, t, width, heads, n = (
        sympy.Symbol(name, positive=True, integer=True)
        for name in ("b", "t", "width", "heads", "n")
    )
    head = sympy.floor(width / heads)
    h100 = load_devices().get("h100-sxm")
    specs = [
        KernelSpec(
            label="attend",
            flops=sympy.expand(2 * b * heads * t * width * head - b * heads * t * head),
            bytes_moved=sympy.expand(4 * b * heads * t * head + 12 * b * t * width + 4 * width),
            precision="fp32",
        ),
        KernelSpec(
            label="shifted",
            flops=sympy.expand((n - 8) * sympy.floor(n / 2) * n),
            bytes_moved=sympy.expand(8 * (n - 8) * (n + sympy.floor(n / 2))),
            precision="fp32",
        ),
    ]
    from aiscan.roofline.plot import place_kernel

    return tuple(
        (spec, place_kernel(spec, h100), place_kernel(spec, h100, simplified=False))
        for spec in specs
    )


def test_a_drawing_reads_the_same_paths_without_sympys_simplify(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PNG's placements keep the ratio as it stands where only sympy's `simplify` would
    give the AI its printed form: the same path over sizes, float for float (the 0/0 of a
    cancelled factor included), the same crossover and verdict, no limit."""
    from aiscan.roofline.plot import swept_path

    placed = _floor_kernel_placements()  # the HTML's placements first: `simplify` memoized
    monkeypatch.setattr(placement.sympy, "simplify", lambda *a, **k: pytest.fail("simplify called"))
    for spec, whole, drawn in placed:
        assert drawn.intensity_limit is None and whole.intensity_limit is not None
        assert drawn.intensity != whole.intensity  # the ratio as it stands
        assert (drawn.crossover, drawn.bound) == (whole.crossover, whole.bound)
        path = swept_path(spec, drawn, (8, 4096))
        assert path == swept_path(spec, whole, (8, 4096))
        assert path[0][0] == 8 and len(path) == 10
