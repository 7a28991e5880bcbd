"""One core or many (issue 32): the threads a loop nest runs on, and a CPU's roofs for
that many threads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.errors import UsageError
from aiscan.frontends.c.frontend import lower_c_source
from aiscan.ir.nodes import Loop
from aiscan.roofline.devices import load_device_file, load_devices
from aiscan.roofline.hierarchy import cache_specs
from aiscan.roofline.threads import ThreadRequest, scaled_to_threads, thread_request

SOURCES = """void serial(int n, double *restrict a, const double *restrict b) {
    for (int i = 0; i < n; i++)
        a[i] = 2.0 * b[i] + a[i];
}
void shared(int n, double *restrict a, const double *restrict b) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        a[i] = 2.0 * b[i] + a[i];
}
void region(int n, double *restrict a, const double *restrict b) {
    omp_set_num_threads(4);
    #pragma omp parallel
    {
        #pragma omp for
        for (int i = 0; i < n; i++)
            a[i] = 2.0 * b[i] + a[i];
    }
}
void clause(int n, double *restrict a, const double *restrict b) {
    #pragma omp parallel for num_threads(8)
    for (int i = 0; i < n; i++)
        a[i] = 2.0 * b[i] + a[i];
}
void simd(int n, double *restrict a, const double *restrict b) {
    #pragma omp simd
    for (int i = 0; i < n; i++)
        a[i] = 2.0 * b[i] + a[i];
}
"""


def _requests() -> dict[str, ThreadRequest]:
    module = lower_c_source(SOURCES, "threads.c")
    return {f.name: thread_request(f.regions) for f in module.functions}


def test_openmp_directives_decide_the_threads() -> None:
    assert _requests() == {
        "serial": ThreadRequest(1, "no OpenMP pragma on the nest"),
        "shared": ThreadRequest(None, "#pragma omp parallel for schedule(static), line 6"),
        "region": ThreadRequest(4, "#pragma omp for, line 14; omp_set_num_threads, line 11"),
        "clause": ThreadRequest(8, "#pragma omp parallel for num_threads(8), line 20"),
        "simd": ThreadRequest(1, "no OpenMP pragma on the nest"),
    }
    module = lower_c_source(SOURCES, "threads.c")
    (loop,) = module.functions[2].regions[0].body
    assert isinstance(loop, Loop) and loop.parallel is not None
    assert not any("omp_set_num_threads" in u.message for u in module.functions[2].unknowns)


def test_the_user_overrides_the_code() -> None:
    module = lower_c_source(SOURCES, "threads.c")
    assert thread_request(module.functions[0].regions, 16) == ThreadRequest(16, "--threads 16")


def test_one_core_of_the_epyc() -> None:
    epyc = load_devices().get("epyc")
    one = scaled_to_threads(epyc, 1)
    fp64 = one.peak("fp64")
    assert fp64 is not None and fp64.dense_flops_per_s == 59.2e9  # 16 FLOP/cycle x 3.7 GHz
    assert fp64.source.startswith("one core: Derived: 16 FP64 FLOP/cycle")
    assert one.main_memory.bandwidth_bytes_per_s == 64e9
    assert one.main_memory.source.startswith("one core: Derived, no published single-core")
    # Four cores: four times one core's bandwidth, below the socket's 460.8 GB/s.
    assert scaled_to_threads(epyc, 4).main_memory.bandwidth_bytes_per_s == 256e9
    every = scaled_to_threads(epyc, 96)
    assert every.main_memory.bandwidth_bytes_per_s == 460.8e9
    assert every.peak("fp64").dense_flops_per_s == 3.6864e12  # type: ignore[union-attr]


def test_a_measured_curve_sets_the_bandwidth_of_n_cores() -> None:
    haswell = load_devices().get("haswell")
    curve = {n: scaled_to_threads(haswell, n).main_memory.bandwidth_bytes_per_s for n in (1, 3, 13)}
    assert curve == {1: 9.70e9, 3: 27.73e9, 13: 44.21e9}
    # Every core: the device's own figure (the seeds' sustained 50 GB/s), not the curve's end.
    assert scaled_to_threads(haswell, 14).main_memory.bandwidth_bytes_per_s == 50e9
    l3 = scaled_to_threads(haswell, 2).memory_level("L3")
    assert l3.bandwidth_bytes_per_s == 43.32e9 and "measured curve" in l3.source


def test_one_thread_has_a_whole_shared_cache() -> None:
    epyc = load_devices().get("epyc")
    shares = {
        n: [s.capacity_bytes for s in cache_specs(scaled_to_threads(epyc, n))[0]] for n in (1, 96)
    }
    # L1d 32 KB and L2 1 MiB private; the L3 is 32 MB per CCX of 8 cores (12 of them).
    assert shares[1] == [32768, 1048576, 32e6]
    assert shares[96] == [32768, 1048576, 4e6]


def _placements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> dict[str, dict[str, object]]:
    source = tmp_path / "threads.c"
    source.write_text(SOURCES)
    argv = ["analyze", str(source), "--format", "json", "--no-cache", "--size", "n=100000000"]
    assert main([*argv, *options]) == 0
    report = json.loads(capsys.readouterr().out)
    return {f["name"]: f["nests"][0]["placement"][0] for f in report["files"][0]["functions"]}


def test_serial_and_parallel_loops_are_placed_on_their_cores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placed = _placements(tmp_path, capsys, "--device", "epyc")
    serial, shared = placed["serial"], placed["shared"]
    assert serial["threads"] == {"count": 1, "reason": "no OpenMP pragma on the nest"}
    assert serial["bandwidth_bytes_per_s"] == 64e9 and serial["peak_flops_per_s"] == 59.2e9
    assert shared["threads"] == {
        "count": 96,
        "reason": "#pragma omp parallel for schedule(static), line 6; every core",
    }
    assert shared["bandwidth_bytes_per_s"] == 460.8e9
    # 24 bytes an element from DRAM: one core's 64 GB/s, 96 cores' 460.8.
    assert serial["times"]["lower_bound_s"] == pytest.approx(24e8 / 64e9)  # type: ignore[index]
    assert shared["times"]["lower_bound_s"] == pytest.approx(24e8 / 460.8e9)  # type: ignore[index]
    assert placed["region"]["threads"]["count"] == 4  # type: ignore[index]
    assert placed["region"]["bandwidth_bytes_per_s"] == 256e9


def test_threads_option_and_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    placed = _placements(tmp_path, capsys, "--device", "epyc", "--threads", "2")
    assert placed["serial"]["threads"] == {"count": 2, "reason": "--threads 2"}
    assert placed["serial"]["bandwidth_bytes_per_s"] == 128e9
    config = tmp_path / "aiscan.toml"
    config.write_text('threads = 200\ncflags = "-O3"\n')
    placed = _placements(tmp_path, capsys, "--device", "epyc", "--config", str(config))
    assert placed["serial"]["threads"] == {
        "count": 96,
        "reason": f"threads = 200 in {config}; capped at 96 cores",
    }
    assert main(["analyze", str(tmp_path / "threads.c"), "--device", "epyc", "--threads", "0"]) == 2


def test_gpus_are_unaffected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    placed = _placements(tmp_path, capsys, "--device", "h100")
    assert placed["serial"]["threads"] is None
    assert placed["serial"]["bandwidth_bytes_per_s"] == 3.35e12


def test_schema_3_tables_need_schema_3_and_matching_levels(tmp_path: Path) -> None:
    base = (
        'name = "x"\nkind = "cpu"\nwrite_allocate = true\ncores = 4\n'
        '[peaks.fp64]\ndense_flops_per_s = 1e11\nsource = "s"\n'
        '[[memory]]\nname = "DRAM"\nlevel = "dram"\nbandwidth_bytes_per_s = 1e11\nsource = "s"\n'
    )
    core = '[core.memory.DRAM]\nbandwidth_bytes_per_s = 3e10\nsource = "s"\n'
    path = tmp_path / "x.toml"
    path.write_text("schema = 2\n" + base + core)
    with pytest.raises(UsageError, match="field 'core': needs schema = 3"):
        load_device_file(path)
    path.write_text("schema = 3\n" + base + core.replace("DRAM]", "HBM]"))
    with pytest.raises(UsageError, match=r"core\.memory\.HBM'"):
        load_device_file(path)
    curve = (
        '[scaling.memory.DRAM]\nthreads = [1, 4]\nbandwidth_bytes_per_s = [3e10]\nsource = "s"\n'
    )
    path.write_text("schema = 3\n" + base + curve)
    with pytest.raises(UsageError, match="one positive number per count"):
        load_device_file(path)
    latency = '[core.latency.fp64]\nadd_cycles = 3\nmul_cycles = 3\nfma_cycles = 4\nsource = "s"\n'
    path.write_text("schema = 3\n" + base + latency)
    with pytest.raises(UsageError, match=r"needs core\.clock_hz"):
        load_device_file(path)
    path.write_text("schema = 3\n" + base + core + curve.replace("[3e10]", "[3e10, 9e10]"))
    device = load_device_file(path)
    assert scaled_to_threads(device, 2).main_memory.bandwidth_bytes_per_s == 5e10


def test_devices_show_prints_one_core(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices", "show", "haswell"]) == 0
    out = capsys.readouterr().out
    assert "one core\n  clock        3.3 GHz" in out
    assert "  fp64 latency add 3, mul 5, fma 5, divide 10 cycles" in out
    assert "  DDR4-2133 (4 channels) by threads: 1: 9.7 GB/s, 2: 20.13 GB/s," in out


def test_the_roofline_plot_draws_the_roofs_of_the_kernels_threads() -> None:
    from aiscan.ir.symbols import size_symbol
    from aiscan.roofline.plot import KernelSpec, build_figure

    n = size_symbol("n")
    triad = KernelSpec("triad", 2 * n, 24 * n, "fp64", threads=ThreadRequest(1, "serial"))
    epyc = load_devices().get("epyc")
    figure = build_figure([triad], [epyc], sizes={"n": 10**8})
    (roof,) = [line for line in figure.axes[0].lines if line.get_gid() == "roof:epyc-9654:fp64"]
    assert roof.get_label() == (
        "epyc-9654 (1 thread) FP64 vector units dense: 59.2 GFLOP/s, "
        "DDR5-4800 (12 channels) 64 GB/s"
    )
    # The roof is one core's: min(59.2 GFLOP/s, 64 GB/s x AI) at AI = 1.
    xs, ys = roof.get_data()
    at_one = min(range(len(xs)), key=lambda i: abs(float(xs[i]) - 1.0))
    assert float(ys[at_one]) == pytest.approx(min(59.2e9, 64e9 * float(xs[at_one])))


def test_kernels_on_fewer_threads_get_their_own_roof() -> None:
    """A serial triad beside a kernel on every core: the device's roof is every core's, and
    the triad's point sits on a dotted roof of one core, named with its thread count (it
    sat far under the only roof drawn, with nothing to say why)."""
    from aiscan.ir.symbols import size_symbol
    from aiscan.roofline.plot import KernelSpec, build_figure

    n = size_symbol("n")
    triad = KernelSpec("triad", 2 * n, 24 * n, "fp64", threads=ThreadRequest(1, "serial"))
    wide = KernelSpec("wide", 2 * n, 24 * n, "fp64", threads=ThreadRequest(None, "OpenMP"))
    epyc = load_devices().get("epyc")
    figure = build_figure([triad, wide], [epyc], sizes={"n": 10**8})
    roofs = {
        str(line.get_gid()): line
        for line in figure.axes[0].lines
        if str(line.get_gid()).startswith("roof:")
    }
    assert set(roofs) == {"roof:epyc-9654:fp64", "roof:epyc-9654:fp64@1"}
    assert roofs["roof:epyc-9654:fp64"].get_label().startswith("epyc-9654 (96 threads) FP64")
    one = roofs["roof:epyc-9654:fp64@1"]
    assert one.get_linestyle() == ":"
    assert one.get_label() == (
        "epyc-9654 (1 thread) FP64 vector units dense: 59.2 GFLOP/s, "
        "DDR5-4800 (12 channels) 64 GB/s"
    )
    # The triad's point (AI 1/12) lies on it: 64 GB/s x 1/12.
    (point,) = [line for line in figure.axes[0].lines if line.get_gid() == "kernel:triad:epyc-9654"]
    xs, ys = point.get_data()
    assert float(xs[0]) == pytest.approx(1 / 12)
    assert float(ys[0]) == pytest.approx(64e9 / 12)
    line_xs, line_ys = one.get_data()
    at = min(range(len(line_xs)), key=lambda i: abs(float(line_xs[i]) - 1 / 12))
    assert float(line_ys[at]) == pytest.approx(64e9 * float(line_xs[at]))


def test_numpy_contractions_use_every_core_and_element_wise_code_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "kernels.py"
    source.write_text(
        "import numpy as np\n\n\n"
        "def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:\n"
        "    return a @ b\n\n\n"
        "def axpy(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:\n"
        "    return a * x + y\n"
    )
    argv = ["analyze", str(source), "--device", "epyc", "--format", "json", "--no-cache"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    threads = {
        f["name"]: f["nests"][0]["placement"][0]["threads"] for f in report["files"][0]["functions"]
    }
    assert threads == {
        "matmul": {
            "count": 96,
            "reason": "a library contraction: BLAS runs it on the cores; every core",
        },
        "axpy": {"count": 1, "reason": "NumPy element-wise calls run on one thread"},
    }
