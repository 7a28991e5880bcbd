"""The `cache` traffic model (layer conditions), its device data and its placements.

Expected per-level bytes are written by hand beside each fixture
(`[functions.NAME.cache.CASE]` in `fixtures/c/*.expected.toml`) for the
`fixtures/devices/cachegrind-default.toml` hierarchy, the one the issue specifies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import sympy
from golden import FIXTURES, load_expectations, same

from aiscan.analysis.cache_model import CacheLevelSpec, broken_reuses, cache_traffic
from aiscan.analysis.kernel import analyze_module
from aiscan.cli import main
from aiscan.errors import UsageError
from aiscan.ir.symbols import size_symbol
from aiscan.options import PipelineOptions
from aiscan.pipeline import lower_source
from aiscan.report.assembly import load_schema
from aiscan.roofline.devices import load_device_file, load_devices
from aiscan.roofline.hierarchy import cache_specs, device_cache_traffic

CACHEGRIND = FIXTURES / "devices" / "cachegrind-default.toml"


def _cases() -> list[tuple[Path, str, str, dict[str, Any]]]:
    cases = []
    for path in sorted((FIXTURES / "c").glob("*.expected.toml")):
        for function, expected in load_expectations(path).get("functions", {}).items():
            for case, values in expected.get("cache", {}).items():
                cases.append(
                    (
                        path.with_name(path.name.replace(".expected.toml", ".c")),
                        function,
                        case,
                        values,
                    )
                )
    return cases


def _function(path: Path, name: str) -> Any:
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module)
    return next(f for f in analysis.functions if f.function.name == name)


@pytest.mark.parametrize(
    ("path", "function", "case", "expected"),
    _cases(),
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_fixture_cache_traffic(path: Path, function: str, case: str, expected: dict) -> None:
    device = load_device_file(
        FIXTURES / "devices" / f"{expected.get('device', CACHEGRIND.stem)}.toml"
    )
    sizes = dict(expected["sizes"])
    analysis = _function(path, function)
    traffic = device_cache_traffic(
        [r.region.body for r in analysis.regions],
        device,
        write_allocate=device.write_allocate,
        sizes=sizes,
    )
    assert traffic is not None
    assert [level.level for level in traffic.levels] == ["D1", "LL", "DRAM"]
    for level in traffic.levels:
        assert level.exact
        assert same(level.total, expected[level.level]), (level.level, level.total)


def test_cachegrind_default_file_loads_without_schema_and_models_its_caches() -> None:
    device = load_device_file(CACHEGRIND)
    assert device.schema == 3  # no `schema` key: the newest
    specs, notes = cache_specs(device)
    assert [(s.name, s.capacity_bytes, s.line_bytes) for s in specs] == [
        ("D1", 32768, 64),
        ("LL", 262144, 64),
    ]
    assert notes == ()
    assert device.memory_level("LL").associativity == 8


def test_shipped_epyc_cache_geometry_has_sources_and_per_core_shares() -> None:
    device = load_devices().get("epyc-9654")
    assert device.cores == 96
    specs, _ = cache_specs(device)
    shares = {s.name: s.capacity_bytes for s in specs}
    assert shares["L1d"] == pytest.approx(32768)
    assert shares["L2"] == pytest.approx(1048576)
    assert shares["L3"] == pytest.approx(4e6)  # 32 MB per 8-core CCX
    assert all("64-byte" in device.memory_level(s.name).source for s in specs)


def test_schema_one_levels_reject_geometry_and_have_no_cache_model(tmp_path: Path) -> None:
    text = CACHEGRIND.read_text()
    old = tmp_path / "old.toml"
    old.write_text("schema = 1\n" + text)
    with pytest.raises(UsageError, match="unknown field"):
        load_device_file(old)
    plain = "\n".join(
        line for line in text.splitlines() if not line.startswith(("line_bytes", "associativity"))
    )
    old.write_text("schema = 1\n" + plain)
    device = load_device_file(old)
    specs, notes = cache_specs(device)
    assert specs == () and len(notes) == 2


def test_layer_condition_states_where_it_breaks() -> None:
    analysis = _function(FIXTURES / "c" / "dgemm_ijk.c", "dgemm")
    levels = cache_traffic(
        analysis.regions[0].region.body,
        [CacheLevelSpec("L2", 1048576, 64)],
        "DRAM",
        write_allocate=True,
        sizes={"n": 4096},
    )
    (memory,) = levels[1:]
    by_loop = {c.loop_var: c for c in memory.conditions}
    # B's column, A's row and C's line: 72n + 64 bytes fit half of 1 MiB below n = 7280.9.
    assert same(by_loop["j"].working_set, "72*n + 64")
    assert by_loop["j"].holds and by_loop["j"].by_size
    assert by_loop["j"].breaks_at == pytest.approx((524288 - 64) / 72)
    assert not by_loop["i"].holds


def test_without_sizes_growing_working_sets_take_the_large_size_branch() -> None:
    analysis = _function(FIXTURES / "c" / "dgemm_ijk.c", "dgemm")
    levels = cache_traffic(
        analysis.regions[0].region.body,
        [CacheLevelSpec("D1", 32768, 64)],
        "DRAM",
        write_allocate=False,
    )
    n = size_symbol("n")
    # No write-allocate: C's line is written back, never read.
    assert same(levels[1].total, "n**2*(8*n + 64*n) + 64*n**2")
    assert all(not c.by_size for c in levels[1].conditions if c.working_set.has(n))


def test_indirect_reuse_is_a_flagged_range() -> None:
    analysis = _function(FIXTURES / "c" / "indirect.c", "gather_add")
    levels = cache_traffic(
        analysis.regions[0].region.body,
        [CacheLevelSpec("D1", 32768, 64)],
        "DRAM",
        write_allocate=False,
        sizes={"n": 1000},
    )
    memory = levels[-1]
    assert not memory.exact
    assert memory.undecided and "idx" in memory.undecided[0].reason
    assert memory.undecided[0].line == 5
    assert memory.read_lower is not None
    assert same(
        memory.read_lower + memory.write_lower, str(analysis.traffic["compulsory"].total(False))
    )
    assert same(memory.total, str(analysis.traffic["streaming"].total(False)))


def _json(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict[str, Any]:
    assert main(["analyze", "--format", "json", "--no-cache", *arguments]) == 0
    report = json.loads(capsys.readouterr().out)
    jsonschema.validate(report, load_schema())
    return report


def _nest(report: dict[str, Any]) -> dict[str, Any]:
    nest: dict[str, Any] = report["files"][0]["functions"][0]["nests"][0]
    return nest


def test_naive_dgemm_on_epyc_is_memory_bound_at_dram(capsys: pytest.CaptureFixture[str]) -> None:
    # On every core (the socket's roofs): serial code is placed on one (test_threads.py).
    report = _json(
        capsys, "fixtures/c/dgemm_ijk.c", "--device", "epyc-9654", "--size", "n=4096",
        "--threads", "96",
    )  # fmt: skip
    assert report["schema_version"] == "1.8"
    nest = _nest(report)
    (placed,) = nest["placement"]
    assert placed["model"] == "cache" and placed["bound"] == "memory"
    assert placed["bound_level"] == "DDR5-4800 (12 channels)"
    # 8n^3 bytes from DRAM (B streamed once per i): AI ~ 2n^3 / 8n^3 = 1/4.
    assert placed["intensity_flops_per_byte"] == pytest.approx(0.25, rel=1e-3)
    assert placed["attainable_flops_per_s"] == pytest.approx(460.8e9 * 0.25, rel=1e-3)
    (traffic,) = nest["cache_traffic"]
    assert [lv["level"] for lv in traffic["levels"]] == [
        "L1d",
        "L2",
        "L3",
        "DDR5-4800 (12 channels)",
    ]
    assert traffic["bound"] == "DDR5-4800 (12 channels)"
    memory = traffic["levels"][-1]
    assert memory["read"] == "8*n**3 + 16*n**2" and memory["write"] == "8*n**2"
    assert memory["read_value"] == 8 * 4096**3 + 16 * 4096**2
    assert memory["intensity"]["decimal"] == pytest.approx(0.2498, rel=1e-3)
    # The compulsory model is still reported, the best case.
    assert nest["bytes"]["compulsory"]["total"] == "24*n**2"


def test_models_are_selectable(capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "fixtures/c/dgemm_ijk.c",
        "--device",
        "epyc-9654",
        "--size",
        "n=4096",
        "--threads",
        "96",
    )
    placed = _nest(_json(capsys, *args, "--model", "compulsory"))["placement"][0]
    assert placed["model"] == "compulsory" and placed["bound"] == "compute"
    placed = _nest(_json(capsys, *args, "--model", "streaming"))["placement"][0]
    assert placed["model"] == "streaming" and placed["bound"] == "memory"
    assert placed["intensity_flops_per_byte"] == pytest.approx(4096 / (8 * 4096 + 8))  # C allocated


def test_cache_model_on_a_device_without_cache_geometry_names_the_bytes_it_places(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--model cache` on the L4 (no cache geometry) places the compulsory bytes: the text
    and JSON said `cache bytes 24*n` beside the note saying compulsory traffic."""
    args = ("fixtures/c/daxpy.c", "--device", "l4", "--model", "cache")
    placed = _nest(_json(capsys, *args))["placement"][0]
    assert placed["traffic_view"] == "compulsory" and placed["model"] == "compulsory"
    assert main(["analyze", "--no-cache", *args]) == 0
    text = capsys.readouterr().out
    assert "; compulsory bytes 24*n;" in text and "cache bytes" not in text
    assert "placed with compulsory traffic" in text


def test_daxpy_on_h100_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    placed = _nest(_json(capsys, "fixtures/c/daxpy.c", "--device", "h100"))["placement"][0]
    assert placed["model"] == "cache" and placed["bound_level"] == "HBM3"
    assert round(placed["attainable_flops_per_s"] / 1e9, 1) == 279.2  # AI 1/12, no sizes
    report = _json(capsys, "fixtures/c/daxpy.c", "--device", "h100", "--size", "n=100000000")
    placed = _nest(report)["placement"][0]
    assert placed["attainable_flops_per_s"] == pytest.approx(3.35e12 / 12, rel=1e-6)
    assert round(placed["attainable_flops_per_s"] / 1e9, 1) == 279.2


@pytest.mark.parametrize(
    ("device", "level"), [("h100", "HBM3"), ("epyc-9654", "DDR5-4800 (12 channels)")]
)
def test_time_looped_jacobi_is_memory_bound_at_large_n(
    capsys: pytest.CaptureFixture[str], device: str, level: str
) -> None:
    report = _json(
        capsys,
        "fixtures/c/jacobi2d_time.c",
        "--device",
        device,
        "--size",
        "n=2896",
        "--size",
        "T=100",
        "--threads",
        "96",
    )
    nest = _nest(report)
    placed = nest["placement"][0]
    assert placed["bound"] == "memory" and placed["bound_level"] == level
    assert placed["fraction_of_peak"] < 0.05
    # The compulsory AI grows with T and would have said compute-bound.
    assert nest["intensity"]["compulsory"]["decimal"] > 10


def test_text_report_names_the_bounding_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "analyze",
                "--no-cache",
                "fixtures/c/dgemm_ijk.c",
                "--device",
                "epyc-9654",
                "--size",
                "n=4096",
                "--threads",
                "96",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "memory-bound at DRAM (DDR5-4800, 12 channels)" in out
    assert "cache model, AI per level: DDR5-4800 (12 channels) 0.2498 F/B" in out
    # The levels without a bandwidth, each once: L2 serves D1's misses (72n^3: B's column
    # lines); the DRAM level is on the line above, not repeated.
    assert (
        "cache traffic, AI at levels without a roof: L1d 0.125 F/B, L2 0.02777 F/B, L3 0.2498 F/B\n"
    ) in out
    assert out.count("DDR5-4800 (12 channels) 0.2498 F/B") == 1


def test_device_file_cache_model_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = _json(
        capsys,
        "fixtures/c/stride2.c",
        "--device-file",
        str(CACHEGRIND),
        "--device",
        "cachegrind-default",
        "-D",
        "n=1000000",
    )
    traffic = _nest(report)["cache_traffic"][0]
    assert [lv["level"] for lv in traffic["levels"]] == ["D1", "LL", "DRAM"]
    assert traffic["levels"][-1]["read_value"] == 16_000_000  # twice the compulsory bytes
    assert traffic["bound"] == "DRAM"


def test_broken_reuse_names_the_loop_to_block_and_the_block_size() -> None:
    analysis = _function(FIXTURES / "c" / "dgemm_ijk.c", "dgemm")
    body = analysis.regions[0].region.body
    (broken,) = broken_reuses(
        body, CacheLevelSpec("L3", 4e6, 64), write_allocate=True, sizes={"n": 4096}
    )
    assert broken.loop.var == "i" and broken.block_loop is not None
    assert broken.block_loop.var == "j"
    # One i step with j blocked by b: A's row (8n), b columns of B (8nb), C's b elements
    # (8b): 8n + 8nb + 8b <= 2e6 gives b = 60.
    assert broken.block_size == 60
    assert broken.working_set_bytes == 8 * 4096**2 + 16 * 4096
    # Lost: B read n times instead of once (and rows of A and C), 8n^3 - 8n^2 + ...
    assert broken.lost_bytes == pytest.approx(8 * 4096**3, rel=0.01)
    # Rows that share nothing: one i step (a row, 8n bytes) outgrows the cache at
    # n = 10^4, yet no reuse crosses rows, so nothing is lost and nothing is reported.
    rows = _function(FIXTURES / "c" / "linearized_rows.c", "within_rows").regions[0]
    small = CacheLevelSpec("D1", 32768, 64)
    traffic = cache_traffic(rows.region.body, [small], "M", write_allocate=True, sizes={"n": 10**4})
    assert not traffic[1].conditions[0].holds
    assert broken_reuses(rows.region.body, small, write_allocate=True, sizes={"n": 10**4}) == ()


def test_cache_safety_factor_is_a_schema_two_device_field(tmp_path: Path) -> None:
    device = load_device_file(FIXTURES / "devices" / "cachegrind-lru.toml")
    assert device.cache_safety_factor == 1.0
    specs, _ = cache_specs(device)
    assert all(s.safety_factor == 1.0 for s in specs)
    bad = tmp_path / "bad.toml"
    bad.write_text("cache_safety_factor = 2.0\n" + CACHEGRIND.read_text())
    with pytest.raises(UsageError, match="cache_safety_factor"):
        load_device_file(bad)


def test_triangular_nests_with_no_closed_form_sum_place_without_an_internal_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A loop summed by the cache model at its own nesting level: an inner sum with no closed
    form keeps its variable (once it was captured, `Sum(1, (t, 0, t), (t, 0, 299))`, and the
    crossover's sign test raised). Every nest places, with a number at the given size."""
    path = FIXTURES / "c" / "polyhedral_footprints.c"
    argv = ["analyze", str(path), "--device", "epyc", "--size", "n=300", "--format", "json"]
    assert main([*argv, "--no-cache", "--threads", "96"]) == 0
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    report = json.loads(captured.out)
    functions = {f["name"]: f for f in report["files"][0]["functions"]}
    (lu,) = functions["lu"]["cache_traffic"]
    # Its k loops carry A[i][j] through dependent FMAs: bound in the core, not by DRAM.
    assert lu["bound"] == "compute"
    (placed,) = functions["lu"]["nests"][0]["placement"]
    assert placed["bound_name"] == "in-core (dependency chain, line 62)"
    # One row step's working set is the triangle of the rows above it, counted exactly by
    # integer sets at the given size (the box footprints bounded it by 28n^2 - 28n reads,
    # 2.5 MB, over half the core's 4 MB share of L3): A (720 KB) fits, so main memory
    # moves A once, the compulsory bytes exactly (row 0 is never written back).
    memory = lu["levels"][-1]
    assert memory["exact"] is True
    assert memory["read_value"] == 8 * 300**2
    assert memory["write_value"] == 8 * 300**2 - 8 * 300
    for name in ("zero_trip", "matvec_accumulate", "forward_substitution"):
        (entry,) = functions[name]["cache_traffic"]
        assert all(isinstance(level.get("read_value"), float) for level in entry["levels"]), name


def test_trmm_with_the_cachegrind_device_places_without_an_internal_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its cache-model intensity holds a DiracDelta that sympy cannot compare: the value
    stays an expression instead of raising (it did, in simplify and nsimplify)."""
    path = FIXTURES / "c" / "polybench_trmm.c"
    device = Path(__file__).resolve().parent.parent / "scripts" / "cachegrind-default.toml"
    argv = ["analyze", str(path), "-I", str(FIXTURES / "c" / "polybench"), "--no-cache"]
    argv += ["--device-file", str(device), "--device", "cachegrind-default"]
    assert main([*argv, "--size", "m=300,n=300"]) == 0
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    assert "memory-bound" in captured.out or "compute-bound" in captured.out


def test_tiled_nests_run_through_the_cache_model() -> None:
    """Tiled loops (fixtures/c/tiled_loops.c) go through the layer conditions without
    error; at sizes, no cache misses fewer bytes than the compulsory traffic, and the tiled
    dgemm's DRAM bytes are the blocked ones (about 24n^3/bs, not the naive 8n^3)."""
    path = FIXTURES / "c" / "tiled_loops.c"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module)
    caches = [CacheLevelSpec("D1", 32768, 64), CacheLevelSpec("LL", 262144, 64)]
    sizes = {"n": 1000, "bs": 64, "BS": 64, "m": 500, "p": 700}
    values = {size_symbol(k): v for k, v in sizes.items()}
    for function in analysis.functions:
        for region in function.regions:
            levels = cache_traffic(
                region.region.body, caches, "DRAM", write_allocate=True, sizes=sizes
            )
            floor = region.traffic["compulsory"].total(True).subs(values)
            for level in levels[1:]:  # the first is what the core loads and stores
                assert level.total.subs(values) >= floor, (function.function.name, level)
            if function.function.name == "dgemm_tiled3":
                dram = levels[-1].total.subs(values)
                assert dram == 24 * 1000**2 * 16 + 8 * 1000**2


REVERSED_ROWS = """\
void flip_diff(int n, int m, double B[n][m], const double A[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[i][j] = A[n - 1 - i][j] - A[i][j];
}
"""


def test_a_reversed_row_pair_is_a_flagged_bound_not_an_inflated_exact_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows i and n-1-i meet only in the middle: their union is no box, and counting it
    by inclusion and exclusion grew with the rows between them (500 times the traffic)."""
    source = tmp_path / "flip.c"
    source.write_text(REVERSED_ROWS)
    arguments = ["analyze", str(source), "--no-cache", "--format", "json"]
    main([*arguments, "--device", "epyc-9654", "--size", "n=1000", "--size", "m=1000"])
    report = json.loads(capsys.readouterr().out)
    (function,) = report["files"][0]["functions"]
    levels = {level["level"]: level for level in function["cache_traffic"][0]["levels"]}
    assert not levels["L2"]["exact"]  # the union is bounded by the two rows' sum
    dram = levels["DDR5-4800 (12 channels)"]
    assert sympy.sympify(dram["read"]).subs({"m": 1000, "n": 1000}) == 16_000_000
    assert sympy.sympify(dram["write"]).subs({"m": 1000, "n": 1000}) == 8_000_000


def test_references_of_one_stride_share_their_lines() -> None:
    """`x[0] + x[1]` with x walked by 2 reads x once (16n bytes), not twice: its two
    references touch the same lines (valgrind: 3,200,384 bytes at n = 10^5, against the
    4.8 MB predicted before). Four-strided pairs cost a half line per pass each way."""
    walk = _function(FIXTURES / "c" / "while_loops.c", "walk_pairs").regions[0]
    small = CacheLevelSpec("D1", 32768, 64)
    n = size_symbol("n")
    traffic = cache_traffic(walk.region.body, [small], "M", write_allocate=True)
    assert sympy.expand(traffic[-1].read - 24 * n) == 0  # x 16n, y allocated 8n
    assert sympy.expand(traffic[-1].write - 8 * n) == 0
    source = (
        "double f(int n, const double *restrict x) {\n"
        "  double s = 0; for (int i = 0; i < n; i++) s += x[4*i] * x[4*i + 1] + x[4*i + 6];\n"
        "  return s; }\n"
    )
    module = lower_source(source, "k.c", PipelineOptions())
    (region,) = [r for r in analyze_module(module).functions[0].regions if r.region.kind == "nest"]
    traffic = cache_traffic(region.region.body, [small], "M", write_allocate=True)
    # Blocks of 4 elements (32 bytes) 0 .. n: x[4*i + 6] reaches one block past the others.
    assert sympy.expand(traffic[-1].read - 32 * (n + 1)) == 0


GROWING_AND_SHRINKING_ROWS = """\
void growing_rows(int n, const double x[n], double y[n])
{
    for (int k = 1; k < n; k++)
        for (int i = 0; i < k; i++)
            y[i] += x[i];
}
void shrinking_rows(int n, const double x[n], double y[n])
{
    for (int k = 0; k < n - 1; k++)
        for (int i = k + 1; i < n; i++)
            y[i] += x[i];
}
"""


def _rows_traffic(name: str, sizes: dict[str, int] | None) -> Any:
    module = lower_source(GROWING_AND_SHRINKING_ROWS, "rows.c", PipelineOptions())
    (function,) = [f for f in analyze_module(module).functions if f.function.name == name]
    (region,) = [r for r in function.regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64)
    return cache_traffic(region.region.body, [ll], "DRAM", write_allocate=True, sizes=sizes)[-1]


@pytest.mark.parametrize("name", ["growing_rows", "shrinking_rows"])
def test_a_triangle_is_split_where_its_rows_stop_fitting(name: str) -> None:
    """One k step touches k elements of x and of y (16k bytes): they stay in half the LL
    (131,072 bytes) while k <= 8192. The k range is split there: the rows that fit are
    moved once, each longer row pays x, y (allocated) and y's write-back every k. Before
    the split the condition was decided at the largest k, and every row paid (12 n^2)."""
    n = 20_000
    traffic = _rows_traffic(name, {"n": n})
    rows = range(1, n) if name == "growing_rows" else range(n - 1, 0, -1)  # row lengths
    paid = sum(24 * length for length in rows if 16 * length > 131072)
    assert traffic.exact
    assert float(traffic.total.subs(size_symbol("n"), n)) == paid + 24 * 8192
    decided = [c for c in traffic.conditions if c.loop_var == "k"]
    assert sorted((c.holds, str(c.iterations)) for c in decided) == sorted(
        [(True, "(1, 8192)"), (False, "(8193, n - 1)")]
        if name == "growing_rows"
        else [(False, "(0, n - 8194)"), (True, "(n - 8193, n - 2)")]
    )
    # The piece that fits is written from its own end: exact at every n past the cut.
    assert traffic.total.free_symbols == {size_symbol("n")}
    assert same(traffic.total, "12*n**2 - 12*n - 24*8192*8193/2 + 24*8192")


def test_without_sizes_a_triangle_is_not_split() -> None:
    traffic = _rows_traffic("growing_rows", None)
    assert same(traffic.total, "12*n**2 - 12*n")
    assert [c.iterations for c in traffic.conditions] == [None, None]


def test_the_json_gives_each_piece_of_a_split_range_its_iterations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "rows.c"
    source.write_text(GROWING_AND_SHRINKING_ROWS)
    device = ["--device-file", str(CACHEGRIND), "--device", "cachegrind-default"]
    main(["analyze", str(source), "--no-cache", "--format", "json", *device, "--size", "n=20000"])
    report = json.loads(capsys.readouterr().out)
    jsonschema.validate(report, load_schema())
    growing = report["files"][0]["functions"][0]
    dram = growing["cache_traffic"][0]["levels"][-1]
    pieces = [c for c in dram["layer_conditions"] if c["loop"] == "k"]
    assert [(c["holds"], c["iterations"]) for c in pieces] == [
        (True, {"first": "1", "last": "8192"}),
        (False, {"first": "8193", "last": "n - 1"}),
    ]
    assert all("iterations" not in c for c in dram["layer_conditions"] if c["loop"] == "i")


def test_a_split_loop_is_one_broken_reuse_with_what_its_pieces_lose() -> None:
    """AIS009 reports a loop once (for the outermost cache that loses it): each cache cuts
    the range elsewhere, so the reuse names the loop as written, not a piece of it, and
    the loss is the longer rows' alone."""
    module = lower_source(GROWING_AND_SHRINKING_ROWS, "rows.c", PipelineOptions())
    (region,) = [r for r in analyze_module(module).functions[0].regions if r.region.kind == "nest"]
    (loop,) = region.region.body
    n = 20_000
    found = {
        size: broken_reuses(
            region.region.body,
            CacheLevelSpec(str(size), size, 64),
            write_allocate=True,
            sizes={"n": n},
        )
        for size in (32768, 262144)
    }
    (d1,), (ll,) = found[32768], found[262144]
    assert d1.loop == ll.loop == loop  # the whole k loop, from 1, n - 1 iterations
    fits = 262144 // 2 // 16  # 8192 rows of 16 bytes an element
    assert ll.lost_bytes == sum(24 * k for k in range(fits + 1, n)) - 24 * (n - 1)
    assert ll.working_set_bytes == 16 * (n - 1)


def test_a_triangle_of_row_pairs_is_split_with_its_exact_union() -> None:
    """Rows i and i + 1 of a shrinking triangle (benchmark_idioms' pair_scores). The rows
    that fit half the L1 (i >= 3072 at n = 4096) cost their union once; the box rules only
    bounded it (8*n**2 + 4,182,016, above the undivided loop's 8*n**2, so the split was
    not taken). Counted by integer sets, each row is read once there instead of twice:
    4,182,032 bytes fewer, as counting the elements one by one gives."""
    n = 4096
    source = (
        "void pair_scores(int n, double s[n][n]) {\n"
        "    for (int i = n - 1; i >= 0; i--)\n"
        "        for (int j = i + 1; j < n; j++)\n"
        "            s[i][j] = s[i][j - 1] + 0.5 * s[i + 1][j - 1];\n"
        "}\n"
    )
    module = lower_source(source, "pairs.c", PipelineOptions())
    (region,) = [r for r in analyze_module(module).functions[0].regions if r.region.kind == "nest"]
    l1 = CacheLevelSpec("L1", 32768, 64)
    (memory,) = cache_traffic(region.region.body, [l1], "L2", write_allocate=True, sizes={"n": n})[
        1:
    ]

    def row_pair(i: int) -> int:  # s[i][i .. n-1] and s[i + 1][i .. n-2]
        return (n - i) + (n - 1 - i) if i < n - 1 else 0

    fitting = [i for i in range(n) if 8 * row_pair(i) <= 16384]
    union = {(i, j) for i in fitting for j in range(i, n) if i < n - 1}
    union |= {(i + 1, j) for i in fitting for j in range(i, n - 1)}
    paid = sum(row_pair(i) for i in range(n) if i not in set(fitting))
    assert 8 * (len(union) + paid) == 8 * n**2 - 4_182_032
    assert memory.exact
    assert same(memory.read, f"8*n**2 - {4_182_032}") and same(memory.write, "4*n**2 - 4*n")


def test_a_reversed_walk_over_a_triangle_is_an_interval_and_its_range_is_split() -> None:
    """`r[k - i - 1]` for `i < k` touches r[0 .. n - 2]: each k sweeps a run r[0 .. k - 1],
    so its footprint is exact and the layer conditions decide its reuse (before, "may
    touch an element more than once": a range placed at the streaming end, 2,303,808,000
    bytes at n = 12000, 4.50 times valgrind's 511,726,400). One k step touches r, y and z
    over k elements (24k bytes), within half the LL while k <= 5461: the rows up to there
    are moved once, every longer one pays r, y, z (allocated) and z's write-back."""
    reversed_triangle = _function(FIXTURES / "c" / "polyhedral_footprints.c", "reversed_triangle")
    (region,) = [r for r in reversed_triangle.regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64)
    n = 12_000
    traffic = cache_traffic(region.region.body, [ll], "DRAM", write_allocate=True, sizes={"n": n})
    memory = traffic[-1]
    assert memory.exact and not memory.undecided
    paid = sum(32 * k for k in range(1, n) if 24 * k > 131072)
    assert paid + 32 * 5461 == 1_826_735_040
    assert float(memory.total.subs(size_symbol("n"), n)) == 1_826_735_040
    assert sorted((c.holds, str(c.iterations)) for c in memory.conditions if c.loop_var == "k") == [
        (False, "(5462, n - 1)"),
        (True, "(1, 5461)"),
    ]


def test_runs_that_skip_indices_keep_the_footprint_a_bound() -> None:
    """`r[k + i]` with `i = 2k` alone touches r[0], r[3], r[6], ...: n elements in a hull
    of 3n - 2, so no interval; the footprint stays a bound and the reuse undecided."""
    source = (
        "void skip(int n, double *r, double *y) {\n"
        "  for (int k = 0; k < n; k++)\n"
        "    for (int i = 2*k; i < 2*k + 1; i++)\n"
        "      y[k] = 2.0 * r[k + i];\n"
        "}\n"
    )
    module = lower_source(source, "skip.c", PipelineOptions())
    (region,) = [r for r in analyze_module(module).functions[0].regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64)
    memory = cache_traffic(region.region.body, [ll], "DRAM", write_allocate=True)[-1]
    assert [u.line for u in memory.undecided] == [4]


@pytest.mark.parametrize(
    ("kernel", "safety", "expected", "exact"),
    [
        # The whole LL (LRU, as valgrind simulates it: 638,848 and 333,248 bytes measured):
        # each row step's working set is the triangle of the rows above it, which fits, so
        # A moves once, exactly the compulsory bytes. The box rules' union (whole rows, the
        # references' footprints added) predicted 1,434,400 and 797,600.
        ("lu", 1.0, 638_400, True),
        ("cholesky", 1.0, 321_600, True),
        # Half the LL (the default): the cut falls earlier, where the exact triangle (not
        # the boxes') crosses half the LL, and the rows from there on pay their part every
        # step, still bounded by the boxes inside the row loop, so the level stays a bound
        # (before: 14,520,960 and 3,790,408).
        ("lu", 0.5, 14_267_712, False),
        ("cholesky", 0.5, 3_277_520, False),
    ],
)
def test_a_triangles_working_set_is_a_triangle(
    kernel: str, safety: float, expected: int, exact: bool
) -> None:
    path = FIXTURES / "c" / f"polybench_{kernel}.c"
    options = PipelineOptions(include_dirs=(str(FIXTURES / "c" / "polybench"),))
    module = lower_source(path.read_text(), str(path), options)
    (function,) = analyze_module(module).functions
    (region,) = [r for r in function.regions if r.region.kind == "nest"]
    ll = CacheLevelSpec("LL", 262144, 64, safety_factor=safety)
    memory = cache_traffic(region.region.body, [ll], "DRAM", write_allocate=True, sizes={"n": 200})[
        -1
    ]
    assert memory.exact is exact
    assert memory.total.subs(size_symbol("n"), 200) == expected


NO_LOOP_RECURSIVE_INDIRECT = """\
double scalar_only(double *a, const double *b) {
    a[0] = b[0] * 2.0 + b[1];
    return a[0];
}
double fib(const double *x, int n) {
    if (n < 2) return x[0];
    return fib(x, n - 1) + x[n];
}
void gather(int n, double *y, const double *x, const int *idx) {
    for (int i = 0; i < n; i++) y[i] = 2.0 * x[idx[i]];
}
"""


def test_no_loop_a_recursive_and_an_indirect_kernel_each_get_a_main_memory_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32: "a kernel with no loops, a recursive one and an indirect one give no
    main-memory figure at all": each gets one, in whole lines. Straight-line statements
    move each line once together (`a[0]` written, then read: one line of a, not one per
    statement, which gave 256 read bytes); b[0] and b[1] are two indices, two lines at
    most. The recursive call is not inlined (flagged), x[0] and x[n] are its lines. The
    gather's x is bounded by its executions: a flagged range, with its value at n."""
    source = tmp_path / "kernels.c"
    source.write_text(NO_LOOP_RECURSIVE_INDIRECT)
    device = ["--device-file", str(CACHEGRIND), "--device", "cachegrind-default"]
    argv = ["analyze", str(source), *device, "--size", "n=1000", "--format", "json"]
    main([*argv, "--no-cache"])
    functions = {f["name"]: f for f in json.loads(capsys.readouterr().out)["files"][0]["functions"]}
    memory = {name: f["cache_traffic"][0]["levels"][-1] for name, f in functions.items()}
    assert (memory["scalar_only"]["read_value"], memory["scalar_only"]["write_value"]) == (192, 64)
    assert (memory["fib"]["read_value"], memory["fib"]["write_value"]) == (128, 0)
    gather = memory["gather"]
    assert gather["exact"] is False
    assert (gather["read_value"], gather["write_value"]) == (20_000, 8_000)
    assert (gather["read_lower"], gather["write_lower"]) == ("20*n", "8*n")
    assert "indirect" in gather["undecided"][0]["reason"]


@pytest.mark.parametrize(
    ("fixture", "function"),
    [("python/empty_contraction.py", "pairs_two_apart"), ("c/polyhedral_footprints.c", "lu")],
)
def test_traffic_at_sizes_does_not_depend_on_what_was_asked_before(
    fixture: str, function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plot asks for a nest's traffic without sizes, then at every size of its path, in
    one process: the memo of array bytes kept across sizes must not serve the box bound
    of a union it counts by integer sets at the sizes (`pairs_two_apart` on the H100 came
    out at 0.125 F/B at n = 4, not 0.1875, when it did)."""
    from aiscan.analysis import cache_model

    body = _function(FIXTURES / fixture, function).regions[0].region.body
    device = load_devices([]).get("h100-sxm")

    def at(sizes: dict[str, int] | None) -> str:
        traffic = device_cache_traffic([body], device, write_allocate=True, sizes=sizes)
        return repr(traffic)

    sizes = [{"n": n} for n in (4, 8, 256, 4096)]
    monkeypatch.setattr(cache_model, "_SIZE_FREE_ARRAYS", {})
    alone = [at(s) for s in sizes]
    monkeypatch.setattr(cache_model, "_SIZE_FREE_ARRAYS", {})
    cache_model._worst_at.cache_clear()
    symbolic = at(None)
    assert [at(s) for s in sizes] == alone
    assert at(None) == symbolic
