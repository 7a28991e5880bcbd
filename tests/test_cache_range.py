"""The cache model's range between half a cache and the whole (issue 32: "flagged with a
range whose width is stated"): both ends, the width and the loops, in the text and the
JSON report, and nothing new where no working set lies between the two."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from golden import FIXTURES

from aiscan.analysis import cache_model
from aiscan.analysis.cache_model import CacheLevelSpec, LevelTraffic, cache_traffic
from aiscan.analysis.kernel import analyze_module
from aiscan.cli import main
from aiscan.ir.symbols import size_symbol
from aiscan.options import PipelineOptions
from aiscan.pipeline import lower_source
from aiscan.report.assembly import load_schema
from aiscan.roofline.devices import load_devices
from aiscan.roofline.hierarchy import _added, cache_specs
from aiscan.roofline.threads import ThreadRequest, on_threads

CACHEGRIND = ["--device-file", str(FIXTURES / "devices" / "cachegrind-default.toml")]
CACHEGRIND += ["--device", "cachegrind-default", "--write-allocate"]
POLYBENCH = ["-I", str(FIXTURES / "c" / "polybench")]


def _main_memory(kernel: str, n: int, safety: float = 0.5) -> LevelTraffic:
    """The LL's misses of a PolyBench fixture's nest, with the valgrind set-up's 256 KiB LL."""
    path = FIXTURES / "c" / f"polybench_{kernel}.c"
    options = PipelineOptions(include_dirs=(str(FIXTURES / "c" / "polybench"),))
    (function,) = analyze_module(lower_source(path.read_text(), str(path), options)).functions
    (region,) = [r for r in function.regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64, safety_factor=safety)
    body = region.region.body
    return cache_traffic(body, [ll], "DRAM", write_allocate=True, sizes={"n": n})[-1]


@pytest.mark.parametrize(
    ("kernel", "placed", "whole", "loop"),
    [
        # docs/model.md's table: lu at n = 200, 14,267,712 bytes with half the LL and
        # 638,400 (the compulsory bytes) with the whole: the triangle of the rows above
        # row i fits 256 KiB, not 128 KiB.
        ("lu", 14_267_712, 638_400, ("i", 19)),
        ("cholesky", 3_277_520, 321_600, ("i", 21)),
    ],
)
def test_a_level_near_the_boundary_carries_the_whole_caches_bytes(
    kernel: str, placed: int, whole: int, loop: tuple[str, int]
) -> None:
    memory = _main_memory(kernel, 200)
    n = size_symbol("n")
    assert memory.total.subs(n, 200) == placed  # the placed end is unchanged
    assert memory.whole_cache is not None
    assert memory.whole_cache.total.subs(n, 200) == whole
    # The same as the model run with the whole capacity on its own.
    assert _main_memory(kernel, 200, safety=1.0).total.subs(n, 200) == whole
    assert {(c.loop_var, c.line) for c in memory.whole_cache.conditions} == {loop}
    assert all(c.holds and c.capacity_bytes == 262144 for c in memory.whole_cache.conditions)


@pytest.mark.parametrize("kernel", ["lu", "cholesky"])
def test_without_the_whole_cache_each_level_is_the_same_but_for_it(
    kernel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A size path's points (`whole_cache=False`) read no range: the placed bytes and the
    conditions are those of the full model, and the whole cache is never evaluated."""
    path = FIXTURES / "c" / f"polybench_{kernel}.c"
    options = PipelineOptions(include_dirs=(str(FIXTURES / "c" / "polybench"),))
    (function,) = analyze_module(lower_source(path.read_text(), str(path), options)).functions
    (region,) = [r for r in function.regions if r.region.kind == "nest"]
    caches = [CacheLevelSpec("L1", 32768, 64), CacheLevelSpec("LL", 262144, 64)]
    body = region.region.body
    full = cache_traffic(body, caches, "DRAM", write_allocate=True, sizes={"n": 200})
    assert full[-1].whole_cache is not None

    def not_expected(*_: object) -> None:
        raise AssertionError("the whole cache evaluated for a level that reads none")

    monkeypatch.setattr(cache_model, "_whole_cache", not_expected)
    alone = cache_traffic(
        body, caches, "DRAM", write_allocate=True, sizes={"n": 200}, whole_cache=False
    )
    assert alone == tuple(
        level if level.whole_cache is None else replace(level, whole_cache=None) for level in full
    )


def test_the_text_report_states_both_ends_the_width_and_the_loop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(FIXTURES / "c" / "polybench_lu.c")
    main(["analyze", path, "--no-cache", *POLYBENCH, *CACHEGRIND, "--size", "n=200"])
    out = capsys.readouterr().out
    ranges = [line.strip() for line in out.splitlines() if line.strip().startswith("range,")]
    assert ranges == [
        "range, D1 → LL: 22,216,320 B with working sets in half the cache (placed) to "
        "21,997,920 B in the whole cache, 1.01 times wide: the layer condition of loop `i` "
        "(line 19, i from 0 to 20) holds only in the whole cache",
        "range, LL → DRAM: 14,267,712 B with working sets in half the cache (placed) to "
        "638,400 B in the whole cache, 22.3 times wide: the layer condition of loop `i` "
        "(line 19) holds only in the whole cache",
    ]
    # The placement keeps the conservative end: its bytes are the half-capacity ones.
    assert "cache bytes 8*n**3/3 + 24*n**2 - 149240*n/3 + 1923712;" in out


def _levels(out: str) -> list[dict[str, Any]]:
    report = json.loads(out)
    jsonschema.validate(report, load_schema())
    assert report["schema_version"] == "1.8"
    (nest,) = report["files"][0]["functions"][0]["nests"]
    levels: list[dict[str, Any]] = nest["cache_traffic"][0]["levels"]
    return levels


def test_the_json_carries_both_ends_and_the_width(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "c" / "polybench_cholesky.c")
    arguments = ["analyze", path, "--no-cache", "--format", "json", *POLYBENCH, *CACHEGRIND]
    main([*arguments, "--size", "n=200"])
    dram = _levels(capsys.readouterr().out)[-1]
    assert dram["read_value"] + dram["write_value"] == 3_277_520
    whole = dram["whole_cache"]
    assert (whole["placed_value"], whole["value"]) == (3_277_520, 321_600)
    assert whole["width"] == pytest.approx(3_277_520 / 321_600)
    assert whole["safety_factor"] == 0.5
    assert whole["loops"] == [{"loop": "i", "line": 21}]
    # Without sizes there is no range to state: both ends are the large-size branch.
    main(arguments)
    assert all("whole_cache" not in level for level in _levels(capsys.readouterr().out))


def test_a_kernel_far_from_the_boundary_prints_no_range_and_is_evaluated_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """dgemm at n = 200: B (320 KB) is over the whole LL and a row of A and C with a
    column of B (about 16 KB) far under half of it; the D1's conditions are as clear.
    No working set lies between the two ends, so the whole cache is never evaluated."""

    def not_expected(*_: object) -> None:
        raise AssertionError("the whole cache evaluated far from the boundary")

    monkeypatch.setattr(cache_model, "_whole_cache", not_expected)
    path = str(FIXTURES / "c" / "dgemm_ijk.c")
    main(["analyze", path, "--no-cache", *CACHEGRIND, "--size", "n=200"])
    out = capsys.readouterr().out
    assert "DRAM" in out and "range," not in out
    main(["analyze", path, "--no-cache", "--format", "json", *CACHEGRIND, "--size", "n=200"])
    assert all("whole_cache" not in level for level in _levels(capsys.readouterr().out))


def test_a_device_whose_safety_factor_is_one_has_no_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lru = ["--device-file", str(FIXTURES / "devices" / "cachegrind-lru.toml")]
    path = str(FIXTURES / "c" / "polybench_lu.c")
    main(["analyze", path, "--no-cache", *POLYBENCH, *lru, "--device", "cachegrind-lru"])
    assert "range," not in capsys.readouterr().out


def test_a_function_of_several_nests_adds_the_whole_caches_bytes(tmp_path: Path) -> None:
    """A nest with a range beside one without: the function's whole-cache end is the
    ranged nest's plus the other's bytes, which are the same at either end."""
    source = (FIXTURES / "c" / "polybench_lu.c").read_text()
    source += "void scale(int n, double *x) { for (int i = 0; i < n; i++) x[i] *= 2.0; }\n"
    path = tmp_path / "two.c"
    path.write_text(source)
    options = PipelineOptions(include_dirs=(str(FIXTURES / "c" / "polybench"),))
    bodies = []
    for function in analyze_module(lower_source(source, str(path), options)).functions:
        bodies += [r.region.body for r in function.regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64)
    parts = [cache_traffic(b, [ll], "DRAM", write_allocate=True, sizes={"n": 200}) for b in bodies]
    memory = _added(parts)[-1]
    n = size_symbol("n")
    assert memory.whole_cache is not None
    assert memory.total.subs(n, 200) == 14_267_712 + 3_200
    assert memory.whole_cache.total.subs(n, 200) == 638_400 + 3_200


def test_no_range_where_the_whole_cache_comes_out_higher(tmp_path: Path) -> None:
    """benchmark_idioms' pair_scores at n = 4096 on the EPYC: with the whole L1d its row
    loop is split into pieces whose unions the box rules only bound, and the sum comes
    to 201,310,208 bytes, over the 197,119,976 placed. More room cannot cost more
    traffic: that is the bounds' slack, not a range, and none is stated."""
    source = (FIXTURES / "python" / "benchmark_idioms.py").read_text()
    module = lower_source(source, "benchmark_idioms.py", PipelineOptions())
    (function,) = [f for f in analyze_module(module).functions if f.function.name == "pair_scores"]
    (region,) = [r for r in function.regions if r.region.kind == "nest"]
    device = load_devices().get("epyc-9654")
    specs, _ = cache_specs(on_threads(device, ThreadRequest(1, "test"))[0])
    levels = cache_traffic(
        region.region.body, specs[:1], "L2", write_allocate=True, sizes={"n": 4096}
    )
    assert levels[-1].whole_cache is None
    assert levels[-1].total.subs(size_symbol("n"), 4096) == 197_119_976
