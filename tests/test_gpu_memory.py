"""The GPU memory model (`analysis/gpu_memory.py`) held to the twins' memory simulation
(`scripts/simulate_gpu_memory.py`, figures in `fixtures/cuda/*.memory.json`) and to the
H100 figures of issue 31, without a compiler or a GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.algebra import to_sympy
from aiscan.analysis.gpu_dram import dram_traffic, l2_spec
from aiscan.analysis.gpu_memory import bank_conflicts, sector_traffic, warp_accesses
from aiscan.analysis.intensity import substitute_sizes
from aiscan.analysis.traffic import streaming_traffic
from aiscan.cli import main
from aiscan.frontends.cuda import lower_cuda_source
from aiscan.frontends.triton import lower_triton_kernels
from aiscan.ir.nodes import Region
from aiscan.roofline.devices import load_devices

ROOT = Path(__file__).resolve().parent.parent
CUDA = ROOT / "fixtures" / "cuda"
H100_L2_BYTES = load_devices().get("h100-sxm").memory_level("L2").capacity_bytes

UNALIGNED = {
    ("stencil5", 64),
    ("stencil5", 96),
    ("stencil5", 100),
    ("transpose_naive", 100),
    ("device_helpers", 300),  # rows of 1200 bytes
}
"""Runs where warps start off a sector boundary (rows of 400 bytes, a halo one element
to the side) or lanes sit idle at a guarded edge: the model, which takes every warp
aligned and full, counts fewer sectors than the simulation there."""
RAGGED = {("dot_atomic", 1000), ("vector_add", 3000)}
"""Runs whose last warp is partial (the simulation counts its lanes' sectors only)."""


def _region(name: str) -> Region:
    path = CUDA / f"{name}.cu"
    module = lower_cuda_source(path.read_text(), str(path))
    return module.functions[0].regions[0]


def _runs() -> list[tuple[str, dict[str, object]]]:
    found = []
    for path in sorted(CUDA.glob("*.memory.json")):
        name = path.name.split(".")[0]
        found += [(name, run) for run in json.loads(path.read_text())["launches"]]
    return found


def _at(expr: object, sizes: dict[str, int]) -> int:
    return int(substitute_sizes(to_sympy(expr), sizes))


RUNS = _runs()


@pytest.mark.parametrize(
    ("name", "run"), RUNS, ids=[f"{n}-{r['sizes']}-{r['resident_blocks']}" for n, r in RUNS]
)
def test_l2_to_sm_sectors_match_the_simulation(name: str, run: dict[str, object]) -> None:
    sizes = run["sizes"]
    assert isinstance(sizes, dict)
    traffic = sector_traffic(_region(name), sizes)
    read, write = _at(traffic.read_bytes, sizes), _at(traffic.write_bytes, sizes)
    measured = (run["l2_to_sm_read_bytes"], run["l2_to_sm_write_bytes"])
    if (name, sizes["n"]) in UNALIGNED:
        assert read < measured[0] and write <= measured[1]  # type: ignore[operator]
    elif (name, sizes["n"]) in RAGGED:
        assert read + write == pytest.approx(sum(measured), rel=0.001)  # type: ignore[arg-type]
    else:
        assert (read, write) == measured


@pytest.mark.parametrize(
    ("name", "run"), RUNS, ids=[f"{n}-{r['sizes']}-{r['resident_blocks']}" for n, r in RUNS]
)
def test_dram_bytes_match_the_simulation_where_exact(name: str, run: dict[str, object]) -> None:
    sizes = run["sizes"]
    assert isinstance(sizes, dict)
    traffic = dram_traffic(_region(name), l2_spec(run["l2_bytes"]), "HBM", sizes)  # type: ignore[arg-type]
    assert traffic is not None
    measured = (run["dram_read_bytes"], run["dram_write_bytes"])
    if not traffic.exact:
        # A bound (a ragged grid's guards, the tiled transpose's interleaved rows, the
        # stencil's shifted references): never below what the simulation moves.
        assert int(traffic.read) >= measured[0] - 64  # type: ignore[operator]
        return
    assert (int(traffic.read), int(traffic.write)) == measured


def test_the_scaled_sgemms_overflow_where_their_matrices_stop_fitting() -> None:
    """At n = 128 (the H100's n = 2048, scaled) both read each matrix once; at 256 the
    naive one moves 6 times its compulsory bytes and the tiled one about half of that."""
    spec = l2_spec(52428800 // 256)
    figures = {}
    for name in ("sgemm_naive", "sgemm_tiled"):
        for n in (128, 256):
            traffic = dram_traffic(_region(name), spec, "HBM", {"n": n})
            assert traffic is not None and traffic.exact
            figures[name, n] = int(traffic.total)
    assert figures["sgemm_naive", 128] == figures["sgemm_tiled", 128] == 12 * 128**2
    assert figures["sgemm_naive", 256] == 4_718_592  # 6.0 x compulsory
    assert figures["sgemm_tiled", 256] == 2_621_440
    assert figures["sgemm_tiled", 256] / figures["sgemm_naive", 256] == pytest.approx(
        0.556, abs=0.001
    )


def test_h100_naive_sgemm_spills_between_n_2048_and_4096() -> None:
    """Issue 31's H100: n = 2048 reads each matrix once from DRAM; n = 4096 moves far more
    (86 x compulsory here, 126 x measured); the 32 x 32 tiled kernel about half of it."""
    spec = l2_spec(H100_L2_BYTES)
    naive = {n: dram_traffic(_region("sgemm_naive"), spec, "HBM", {"n": n}) for n in (2048, 4096)}
    tiled = dram_traffic(_region("sgemm_tiled"), spec, "HBM", {"n": 4096})
    assert naive[2048] is not None and naive[4096] is not None and tiled is not None
    assert int(naive[2048].total) == 12 * 2048**2
    assert int(naive[4096].total) == 17_314_086_912 == 86 * 12 * 4096**2
    assert int(tiled.total) == 8_724_152_320
    assert int(tiled.total) / int(naive[4096].total) == pytest.approx(0.504, abs=0.001)
    lost = [c for c in naive[4096].conditions if not c.holds]
    assert [c.loop_var for c in lost] == ["blockIdx_y"]


def test_no_sizes_no_dram_model() -> None:
    assert dram_traffic(_region("sgemm_naive"), l2_spec(H100_L2_BYTES), "HBM", {}) is None


def test_transposes_sectors_naive_is_four_and_a_half_times_tiled() -> None:
    naive = sector_traffic(_region("transpose_naive"), {})
    tiled = sector_traffic(_region("transpose_tiled"), {})
    assert str(naive.total(False)) == "36*n**2"
    assert _at(tiled.total(False), {"n": 4096}) == 8 * 4096**2
    coalesced = {w.access.text: w.coalesced for w in warp_accesses(_region("transpose_naive"), {})}
    assert coalesced == {"in[(y * n) + x]": True, "out[(x * n) + y]": False}


def test_bank_conflicts_power_of_two_rows_only() -> None:
    path = ROOT / "fixtures" / "lint" / "AIS011.cu"
    module = lower_cuda_source(path.read_text(), str(path))
    found = {f.name.split(" ")[0]: bank_conflicts(f.regions[0], {}) for f in module.functions}
    assert [(c.access.text, c.ways) for c in found["transpose_conflict"]] == [
        ("tile[threadIdx_x][threadIdx_y]", 32)
    ]
    assert found["transpose_padded"] == ()
    assert bank_conflicts(_region("transpose_tiled"), {}) == ()  # tile[32][33]


def test_eight_byte_shared_words_by_half_warps_do_not_conflict() -> None:
    path = ROOT / "fixtures" / "lint" / "AIS012.cu"
    module = lower_cuda_source(path.read_text(), str(path))
    (blocks,) = [f for f in module.functions if f.name.startswith("sum_blocks")]
    assert bank_conflicts(blocks.regions[0], {}) == ()


@pytest.mark.parametrize("name", ["matmul", "attention", "transpose", "vector_add", "layernorm"])
def test_triton_blocks_are_coalesced_along_their_contiguous_axis(name: str) -> None:
    """Triton lays a load's lanes along its pointer's contiguous axis: every fixture's
    sectors are its elements' bytes, the transpose's store included."""
    path = ROOT / "fixtures" / "triton" / f"{name}.py"
    kernels = lower_triton_kernels(path.read_text(), str(path))
    region = kernels.functions[0].regions[0]
    assert all(w.coalesced for w in warp_accesses(region, {}))
    assert sector_traffic(region, {}).total(False) == streaming_traffic(region.body).total(False)


def test_the_report_places_a_launch_with_the_l2_model_at_given_sizes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(CUDA / "sgemm_naive.cu")
    placed = {}
    for n in (2048, 4096):
        code = main(["analyze", path, "--size", f"n={n}", "--device", "h100", "--format", "json"])
        assert code == 0
        report = json.loads(capsys.readouterr().out)
        (placement,) = report["files"][0]["functions"][0]["placement"]
        placed[n] = placement
    assert placed[2048]["traffic_view"] == "dram" and placed[2048]["bytes"] == str(12 * 2048**2)
    assert placed[2048]["bound"] == "compute"
    assert placed[4096]["bytes"] == "17314086912" and placed[4096]["bound"] == "memory"
    assert "blockIdx_y (line 4)" in placed[4096]["notes"][0]
    assert main(["analyze", path, "--device", "h100", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    function = report["files"][0]["functions"][0]
    assert function["placement"][0]["traffic_view"] == "compulsory"
    assert function["nests"][0]["gpu_launch"]["l2_sector_bytes"] == "4*n**3 + 4*n**2"


def test_a_numeric_nest_with_a_constant_offset_is_delinearized() -> None:
    """Regression: `footprint._nearest_quotient` rounded a Poly constant (TypeError) once
    the sizes were put in the stencil's `in[(row - 1)*n + col]`."""
    traffic = dram_traffic(_region("stencil5"), l2_spec(H100_L2_BYTES), "HBM", {"n": 64})
    assert traffic is not None
    # Reads are the distinct elements the twin touches, every one but the four corners
    # ((64*64 - 4)*4 bytes, counted on the integer set at the given sizes); the writes'
    # interior stays a bound (64*64*4: 62*62*4 are written).
    assert (int(traffic.read), int(traffic.write)) == ((64 * 64 - 4) * 4, 16384)
    assert not traffic.exact


def test_a_grid_of_one_block_is_decided() -> None:
    """Regression: at n = 32 the naive transpose is one block, whose loop variables stay
    0; its footprints were undecidable (a bound) until such loops were taken out."""
    traffic = dram_traffic(_region("transpose_naive"), l2_spec(H100_L2_BYTES), "HBM", {"n": 32})
    assert traffic is not None and traffic.exact
    assert (int(traffic.read), int(traffic.write)) == (4096, 4096)


def test_h100_naive_sgemm_spills_where_b_stops_fitting_in_half_the_l2() -> None:
    """The size the overflow shows up at (grids of 16 x 16 blocks, n a multiple of 16):
    up to n = 2480 every re-read fits (B, 4 n^2 = 24.6 MB, and a block row of A in half
    of the 50 MB L2); from n = 2496 B's re-reads per block row go to DRAM."""
    spec = l2_spec(H100_L2_BYTES)
    fits = dram_traffic(_region("sgemm_naive"), spec, "HBM", {"n": 2480})
    spills = dram_traffic(_region("sgemm_naive"), spec, "HBM", {"n": 2496})
    assert fits is not None and spills is not None
    assert int(fits.total) == 12 * 2480**2
    assert int(spills.total) > 50 * 12 * 2496**2
    assert [c.loop_var for c in spills.conditions if not c.holds] == ["blockIdx_y"]
