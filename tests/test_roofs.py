"""Compute roofs by the kind of operation (aiscan/roofline/roofs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy

from aiscan.cli import main
from aiscan.ir.symbols import size_symbol
from aiscan.roofline.devices import load_devices
from aiscan.roofline.plot import KernelSpec
from aiscan.roofline.roofs import roof_for

n = size_symbol("n")


@pytest.mark.parametrize(
    ("precision", "contraction", "kind", "tf32", "key"),
    [
        ("fp64", True, "gpu", None, "fp64_tensor"),
        ("fp64", False, "gpu", None, "fp64"),
        ("fp32", True, "gpu", None, "fp32"),
        ("fp32", True, "gpu", "JAX", "tf32"),
        ("fp32", False, "gpu", "JAX", "fp32"),
        ("bf16", True, "gpu", None, "bf16"),
        ("bf16", False, "gpu", None, "bf16_vector"),
        ("fp16", False, "gpu", None, "fp16_vector"),
        ("fp16", False, "cpu", None, "fp16"),
        ("fp64", True, "cpu", None, "fp64"),
    ],
)
def test_roof_keys(
    precision: str, contraction: bool, kind: str, tf32: str | None, key: str
) -> None:
    assert (
        roof_for(precision, contraction=contraction, device_kind=kind, tf32=tf32).precision == key
    )


def test_elementwise_fp16_is_on_the_cuda_cores_not_the_tensor_peak() -> None:
    h100 = load_devices().get("h100")
    placed = KernelSpec("fma", 2 * n, 8 * n, "fp16").place_on(h100, sizes={"n": 1000})
    assert placed.peak_flops_per_s == 133.8e12
    assert placed.roof == "FP16 CUDA cores (element-wise/reduction)"


def test_a_device_without_a_vector_figure_says_so() -> None:
    v100 = load_devices().get("v100-pcie")
    placed = KernelSpec("fma", 2 * n, 8 * n, "fp16").place_on(v100)
    assert placed.precision == "fp16"
    assert any("no fp16_vector peak" in note for note in placed.notes)


def test_sparse_asks_for_the_tensor_cores() -> None:
    h100 = load_devices().get("h100")
    placed = KernelSpec("loop", 2 * n**3, 6 * n**2, "bf16").place_on(h100, sparse=True)
    assert (placed.precision, placed.peak_flops_per_s) == ("bf16", 1979e12)


def test_mixed_kinds_sum_their_math_times() -> None:
    """C = A @ B (2n^3 on FP64 tensor) then an element-wise n^2 (FP64 vector)."""
    h100 = load_devices().get("h100")
    flops = 2 * n**3 + n**2
    spec = KernelSpec("mixed", flops, 32 * n**2, "fp64", contraction_flops=2 * n**3)
    placed = spec.place_on(h100, sizes={"n": 1024})
    assert placed.times is not None
    expected = 2 * 1024**3 / 67e12 + 1024**2 / 34e12
    assert placed.times.math_s == pytest.approx(expected)
    assert placed.roof == (
        "FP64 tensor core (BLAS contraction) + FP64 CUDA cores (element-wise/reduction)"
    )
    assert placed.peak_flops_per_s == pytest.approx(float(flops.subs(n, 1024)) / expected)
    unsized = spec.place_on(h100)
    assert unsized.peak_flops_per_s == 67e12  # the fastest part: still a lower bound
    assert sympy.sympify(unsized.flops) == flops


def test_attainable_roofs_and_both_times_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = Path(__file__).resolve().parent.parent / "fixtures" / "gpu" / "cupy_kernels.py"
    argv = ["analyze", str(path), "--device", "h100", "--size", "n=8192", "--format", "json"]
    assert main([*argv, "--roof", "attainable", "--no-cache"]) == 0
    report = json.loads(capsys.readouterr().out)
    functions = {f["name"]: f for f in report["files"][0]["functions"]}
    (dgemm,) = functions["gemm_f64"]["nests"][0]["placement"]
    assert dgemm["peak_flops_per_s"] == 56.94e12
    assert dgemm["bandwidth_bytes_per_s"] == 3.031e12
    assert "measured: DGEMM" in dgemm["peak_source"]
    both = dgemm["times_by_roof"]
    assert both["attainable"]["math_s"] == pytest.approx((2 * 8192**3 - 8192**2) / 56.94e12)
    assert both["datasheet"]["math_s"] == pytest.approx((2 * 8192**3 - 8192**2) / 67e12)


def test_the_plot_draws_and_names_each_compute_ceiling_it_uses() -> None:
    from aiscan.roofline.plot import build_figure

    h100 = load_devices().get("h100")
    kernels = [
        KernelSpec("fma", 2 * n, 8 * n, "fp16"),
        KernelSpec("hgemm", 2 * n**3, 6 * n**2, "fp16", contraction_flops=2 * n**3),
    ]
    figure = build_figure(kernels, [h100], sizes={"n": 4096})
    labels = {line.get_gid(): str(line.get_label()) for line in figure.axes[0].get_lines()}
    assert "FP16 CUDA cores dense: 133.8 TFLOP/s" in labels["roof:h100-sxm:fp16_vector"]
    assert "FP16 tensor core dense: 989.4 TFLOP/s" in labels["roof:h100-sxm:fp16"]


def test_a_mixed_kernel_draws_both_ceilings() -> None:
    from aiscan.roofline.plot import build_figure

    h100 = load_devices().get("h100")
    spec = KernelSpec("mixed", 2 * n**3 + n**2, 32 * n**2, "fp64", contraction_flops=2 * n**3)
    figure = build_figure([spec], [h100], sizes={"n": 1024})
    gids = {line.get_gid() for line in figure.axes[0].get_lines()}
    assert {"roof:h100-sxm:fp64_tensor", "roof:h100-sxm:fp64"} <= gids


def test_python_matmul_then_elementwise_splits_its_flops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "layer.py"
    path.write_text(
        "import cupy as cp\nfrom jaxtyping import Float64\n\n\n"
        'def layer(A: Float64[cp.ndarray, "n n"], B: Float64[cp.ndarray, "n n"]):\n'
        "    C = A @ B\n    return C * 2.0 + 1.0\n"
    )
    argv = ["analyze", str(path), "--device", "h100", "--size", "n=1024", "--format", "json"]
    assert main([*argv, "--no-cache"]) == 0
    report = json.loads(capsys.readouterr().out)
    (placed,) = report["files"][0]["functions"][0]["nests"][0]["placement"]
    assert placed["roof"] == (
        "FP64 tensor core (BLAS contraction) + FP64 CUDA cores (element-wise/reduction)"
    )
    contraction, vector = 2 * 1024**3 - 1024**2, 2 * 1024**2
    assert placed["times"]["math_s"] == pytest.approx(contraction / 67e12 + vector / 34e12)
    assert placed["traffic_view"] == "eager" and placed["bytes"] == "56*n**2"
