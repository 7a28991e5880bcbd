"""aiscan's GPU verdicts against an H100's counters and clocks (fixtures/gpu).

The fixtures are the reference kernels' algorithms under CuPy (eager), `jax.jit` with x64
on, and JAX's defaults; `fixtures/gpu/h100_measured.toml` holds the figures measured on an
H100 SXM5 (copied from shared/gpu-reference/measured.json, see its header). The checks:

* eager bytes within 5% of CuPy's DRAM bytes, jit bytes within 5% of XLA's, for every
  kernel aiscan places as memory-bound;
* no measured time beats aiscan's lower bound by more than 5%;
* XLA's memory-bound kernels run within 1.25x of the predicted time.

Where a library does more than the API-level model, the exception is documented in
docs/model.md ("Checked against an H100") and asserted here as measured, so it stays
visible. `python tests/test_gpu_reference.py` prints the predicted-against-measured table.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from aiscan.analysis.kernel import FunctionAnalysis
from aiscan.ir.symbols import size_symbol
from aiscan.options import AnalysisOptions, PipelineOptions, PlacementOptions
from aiscan.pipeline import analyze_path
from aiscan.roofline.devices import load_devices
from aiscan.roofline.kernels import kernel_spec
from aiscan.roofline.placement import Bound, Placement

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "gpu"
MEASURED = tomllib.loads((FIXTURES / "h100_measured.toml").read_text(encoding="utf-8"))
RUN_FILES = {"cupy": "cupy_kernels.py", "jax": "jax_kernels.py", "jax_x64_off": "jax_defaults.py"}

GEMM_TILE_REREADS = {"gemm_f64", "gemm_f32", "gemm_bf16"}
"""docs/model.md: cuBLAS/XLA GEMM tiles are re-read past the 50 MB L2 at 8192^3, 3 to 6
times the compulsory bytes; compute-bound either way."""
CUPY_F16_BATCHED_TO_F32 = "batched_gemm_f16"
"""docs/model.md: CuPy's float16 batched matmul converts both operands to float32 and runs a
SIMT SGEMM (copy kernels plus cutlass_80_simt_sgemm): more bytes and time than the model."""
XLA_GEMV_SPLIT = "gemv_f32"
"""docs/model.md: XLA runs the GEMV as a split dot plus a reduce (two launches), 1.2505x the
memory-bound time at base clocks: just past the 1.25x bar."""
WRITE_ONLY_L2_RESIDENT = "outer_f32"
"""docs/model.md: a write-only kernel whose output is 5x the 50 MB L2: about 22 MB of dirty
lines are still in the L2 when the counters stop, so DRAM shows 0.915x the bytes written."""


@dataclass(frozen=True, slots=True)
class Row:
    kernel: str
    run: str
    placement: Placement
    measured: dict[str, object]
    unknowns: int

    @property
    def bytes_predicted(self) -> float:
        times = self.placement.times
        assert times is not None
        return times.comms_s * self.placement.bandwidth_bytes_per_s

    @property
    def lower_bound_s(self) -> float:
        assert self.placement.times is not None
        return self.placement.times.lower_bound_s

    @property
    def fastest_s(self) -> float:
        """The fastest time measured for this run: kernel time or minimum wall time."""
        times = [self.measured.get(k) for k in ("kernel_time_s", "wall_time_s_min")]
        found = [float(t) for t in times if isinstance(t, float)]
        return min(found) if found else float(str(self.measured["wall_time_s_median"]))


@functools.cache
def analyses(run: str) -> dict[str, FunctionAnalysis]:
    options = PipelineOptions(analysis=AnalysisOptions())
    result = analyze_path(str(FIXTURES / RUN_FILES[run]), options)
    assert result.analysis is not None, result.diagnostics
    return {f.function.name: f for f in result.analysis.functions}


@functools.cache
def rows() -> tuple[Row, ...]:
    h100 = load_devices().get("h100")
    options = PlacementOptions(devices=(h100,), model="auto")
    found = []
    for kernel, entry in MEASURED["kernels"].items():
        for run, measured in entry.items():
            if run == "sizes" or "status" in measured:
                continue
            spec = kernel_spec(kernel, analyses(run)[kernel], options)
            placement = spec.place_on(h100, sizes=entry["sizes"])
            unknowns = len(analyses(run)[kernel].unknowns)
            found.append(Row(kernel, run, placement, measured, unknowns))
    return tuple(found)


def counted_rows() -> list[Row]:
    return [r for r in rows() if "dram_bytes" in r.measured]


def test_every_measured_run_is_placed() -> None:
    assert len(rows()) == 18 * 3 - 1  # CuPy has no bfloat16: that run errored


@pytest.mark.parametrize("row", counted_rows(), ids=lambda r: f"{r.kernel}-{r.run}")
def test_memory_bound_bytes_match_the_counters(row: Row) -> None:
    assert not row.unknowns
    measured = float(str(row.measured["dram_bytes"]))
    ratio = measured / row.bytes_predicted
    if row.placement.bound is not Bound.MEMORY:
        # Compute-bound GEMMs: the hardware re-reads tiles past L2 (documented exception).
        assert row.kernel in GEMM_TILE_REREADS | {CUPY_F16_BATCHED_TO_F32}
        low, high = (0.95, 3.0) if row.kernel == CUPY_F16_BATCHED_TO_F32 else (0.95, 6.5)
        if row.kernel == CUPY_F16_BATCHED_TO_F32 and row.run == "cupy":
            low, high = 4.0, 6.0  # float32 copies in and out, SIMT SGEMM
        assert low <= ratio <= high, ratio
        return
    assert row.placement.traffic_view == ("jit" if row.run == "jax" else "eager")
    if row.kernel == WRITE_ONLY_L2_RESIDENT:
        assert 0.9 <= ratio <= 1.0, ratio
    else:
        assert ratio == pytest.approx(1, rel=0.05)


@pytest.mark.parametrize("row", rows(), ids=lambda r: f"{r.kernel}-{r.run}")
def test_no_measured_time_beats_the_lower_bound(row: Row) -> None:
    assert row.fastest_s >= 0.95 * row.lower_bound_s, (row.fastest_s, row.lower_bound_s)


@pytest.mark.parametrize(
    "row",
    [r for r in counted_rows() if r.run == "jax" and r.placement.bound is Bound.MEMORY],
    ids=lambda r: r.kernel,
)
def test_xla_memory_bound_kernels_run_within_1_25x_of_the_bound(row: Row) -> None:
    ratio = float(str(row.measured["kernel_time_s"])) / row.lower_bound_s
    if row.kernel == XLA_GEMV_SPLIT:
        assert 1.25 < ratio < 1.26  # documented exception
        return
    assert ratio <= 1.25


def test_dgemm_and_jax_sgemm_are_on_tensor_cores() -> None:
    by_run = {(r.kernel, r.run): r.placement for r in rows()}
    assert by_run["gemm_f64", "cupy"].roof == "FP64 tensor core (BLAS contraction)"
    assert by_run["gemm_f64", "jax"].precision == "fp64_tensor"
    assert by_run["gemm_f32", "cupy"].precision == "fp32"
    assert by_run["gemm_f32", "jax"].precision == "tf32"
    assert by_run["gemm_f64", "jax_x64_off"].precision == "tf32"  # float64 as float32
    assert by_run["fma_f16", "cupy"].precision == "fp16_vector"
    assert by_run["gemm_bf16", "jax"].roof == "BF16 tensor core (BLAS contraction)"
    # The jit view: mean((a - b)**2) under jax.jit moves 8n (+4 B: the result), d never stored.
    assert by_run["mse_f32", "jax"].bytes_moved == 8 * size_symbol("n") + 4  # + the scalar
    assert by_run["mse_f32", "jax"].traffic_view == "jit"


def table() -> str:
    """Predicted against measured, one line per run (markdown)."""
    lines = [
        "| kernel | run | roof | view | bytes pred. | bytes meas. | ratio | bound pred. | "
        "time meas. | meas./bound |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows():
        measured = r.measured.get("dram_bytes")
        ratio = "-"
        if measured and r.bytes_predicted:
            ratio = f"{float(str(measured)) / r.bytes_predicted:.3f}"
        lines.append(
            f"| {r.kernel} | {r.run} | {r.placement.roof} | {r.placement.traffic_view} | "
            f"{r.bytes_predicted:.4g} | {measured or '-'} | {ratio} | "
            f"{r.lower_bound_s * 1e3:.4g} ms | {r.fastest_s * 1e3:.4g} ms | "
            f"{r.fastest_s / r.lower_bound_s if r.lower_bound_s else float('nan'):.3f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
