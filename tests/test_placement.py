"""Placement reproduces the seed figures of MODEL.md and solves crossovers exactly."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.ir.symbols import fraction_symbol, size_symbol, trip_symbol
from aiscan.roofline.devices import Device, load_devices
from aiscan.roofline.placement import Bound, CrossoverKind, _isolated_roots, place, select_bytes

n, N, M, K = (size_symbol(name) for name in ("n", "N", "M", "K"))


def device(name: str) -> Device:
    return load_devices().get(name)


def test_h100_sparse_bf16_ridge_is_the_seed_590_7() -> None:
    placed = place(2 * N - 1, 4 * N + 2, "bf16", device("h100"), sparse=True)
    assert placed.peak_flops_per_s == 1979e12
    assert placed.ridge_flops_per_byte == pytest.approx(590.7, abs=0.05)


def test_h100_dense_is_the_default() -> None:
    placed = place(2 * N**3, 6 * N**2, "bf16", device("h100"))
    assert not placed.sparse
    assert placed.ridge_flops_per_byte == pytest.approx(989.4 / 3.35)


def test_bf16_dot_of_one_mebi_elements_times() -> None:
    placed = place(2 * N - 1, 4 * N + 2, "bf16", device("h100"), sparse=True, sizes={"N": 2**20})
    assert placed.times is not None
    assert placed.times.math_s == pytest.approx(1.06e-9, abs=0.005e-9)
    assert placed.times.comms_s == pytest.approx(1.25e-6, abs=0.005e-6)
    assert placed.times.lower_bound_s == placed.times.comms_s
    assert placed.times.upper_bound_s == placed.times.math_s + placed.times.comms_s
    assert placed.bound is Bound.MEMORY


def test_bf16_dot_without_sizes_is_memory_bound_at_every_size() -> None:
    placed = place(2 * N - 1, 4 * N + 2, "bf16", device("h100"), sparse=True)
    assert placed.intensity_limit == sympy.Rational(1, 2)
    assert placed.crossover.kind is CrossoverKind.NEVER
    assert placed.bound is Bound.MEMORY
    assert placed.attainable_flops_per_s is None
    assert placed.attainable_limit_flops_per_s == pytest.approx(0.5 * 3.35e12)
    assert placed.times is None


def test_bf16_matmul_crosses_the_ridge_near_1773() -> None:
    placed = place(2 * N**3, 6 * N**2, "bf16", device("h100"), sparse=True)
    assert placed.bound is Bound.DEPENDS_ON_SIZE
    assert sympy.simplify(placed.intensity - N / 3) == 0
    assert placed.intensity_limit == sympy.oo
    crossing = placed.crossover
    assert crossing.kind is CrossoverKind.AT
    assert crossing.size_names == ("N",)
    assert crossing.size_exact == 3 * sympy.Rational(1979, 1) / sympy.Rational("3.35")
    assert crossing.size == pytest.approx(1772.24, abs=0.01)
    assert crossing.first_integer_size == 1773
    assert crossing.compute_bound_above


def test_bf16_matmul_at_64_is_memory_bound_at_71_tflops() -> None:
    placed = place(2 * N**3, 6 * N**2, "bf16", device("h100"), sparse=True, sizes={"N": 64})
    assert placed.intensity_flops_per_byte == pytest.approx(21.3, abs=0.05)
    assert placed.bound is Bound.MEMORY
    assert placed.attainable_flops_per_s == pytest.approx(71.5e12, rel=0.01)
    assert placed.fraction_of_peak == pytest.approx(71.47e12 / 1979e12, rel=1e-3)
    # crossover is still reported with sizes given
    assert placed.crossover.first_integer_size == 1773


def test_bluegene_q_daxpy_attains_2_4_gflops() -> None:
    placed = place(2 * n, 24 * n, "fp64", device("bluegene-q"))
    assert placed.peak_flops_per_s == 204.8e9
    assert placed.ridge_flops_per_byte == pytest.approx(7.11, abs=0.005)
    assert placed.attainable_flops_per_s == pytest.approx(2.4e9)
    assert placed.bound is Bound.MEMORY


def test_haswell_write_allocate_triad_attains_2_5_gflops() -> None:
    haswell = device("haswell")
    triad_bytes = select_bytes(haswell, without_write_allocate=32 * n, with_write_allocate=40 * n)
    assert triad_bytes == 40 * n
    placed = place(2 * n, triad_bytes, "fp64", haswell)
    assert placed.bandwidth_bytes_per_s == 50e9
    assert placed.attainable_flops_per_s == pytest.approx(2.5e9)
    assert placed.fraction_of_peak == pytest.approx(2.5 / 515.2)


def test_write_allocate_follows_the_device_unless_overridden() -> None:
    h100 = device("h100")
    assert select_bytes(h100, without_write_allocate=32 * n, with_write_allocate=40 * n) == 32 * n
    forced = select_bytes(
        h100, without_write_allocate=32 * n, with_write_allocate=40 * n, write_allocate=True
    )
    assert forced == 40 * n


def test_a100_fp16_dense_ridge_about_153() -> None:
    placed = place(2 * N**3, 6 * N**2, "fp16", device("a100"))
    assert placed.ridge_flops_per_byte == pytest.approx(153, abs=0.1)


def test_v100_pcie_linear_layer_is_compute_bound() -> None:
    flops, traffic = 2 * M * K * N, 2 * (M * K + K * N + M * N)
    placed = place(
        flops, traffic, "fp16", device("v100-pcie"), sizes={"M": 512, "K": 1024, "N": 4096}
    )
    assert placed.peak_flops_per_s == 112e12
    assert placed.ridge_flops_per_byte == pytest.approx(124.4, abs=0.05)
    assert placed.intensity_flops_per_byte == pytest.approx(315, abs=0.1)
    assert placed.bound is Bound.COMPUTE
    assert placed.attainable_flops_per_s == 112e12
    assert placed.crossover.size_names == ("K", "M", "N")
    assert placed.crossover.size_exact == 3 * sympy.Rational(112e12) / sympy.Rational(9e11)


def test_no_traffic_has_no_finite_intensity() -> None:
    placed = place(100, 0, "fp64", device("h100"))
    assert placed.intensity is None
    assert placed.bound is Bound.COMPUTE
    assert placed.attainable_flops_per_s == 34e12
    assert placed.crossover.kind is CrossoverKind.ALWAYS
    assert any("no memory traffic" in note for note in placed.notes)


def test_constant_intensity_above_the_ridge_is_always_compute_bound() -> None:
    placed = place(100 * n, 2 * n, "fp64", device("bluegene-q"))
    assert placed.crossover.kind is CrossoverKind.ALWAYS
    assert placed.bound is Bound.COMPUTE
    assert placed.attainable_flops_per_s == 204.8e9


def test_intensity_exactly_at_the_ridge_counts_as_compute() -> None:
    ridge = sympy.Rational("204.8e9") / sympy.Rational("28.8e9")
    placed = place(ridge * 9 * n, 9 * n, "fp64", device("bluegene-q"))
    assert placed.bound is Bound.COMPUTE


def test_falling_intensity_crosses_into_memory_bound() -> None:
    # AI = (n + 100)/n falls from 101 towards 1; BG/Q ridge is 64/9
    placed = place(n + 100, n, "fp64", device("bluegene-q"))
    crossing = placed.crossover
    assert crossing.kind is CrossoverKind.AT
    assert not crossing.compute_bound_above
    assert crossing.size_exact == sympy.Rational(900, 55)
    assert crossing.first_integer_size == 17
    assert placed.bound is Bound.DEPENDS_ON_SIZE


def test_partial_sizes_leave_the_rest_symbolic() -> None:
    flops, traffic = 2 * M * K * N, 2 * (M * K + K * N + M * N)
    placed = place(flops, traffic, "fp16", device("v100-pcie"), sizes={"M": 1})
    # one row: AI = KN/(K + KN + N) < 1 < ridge for every K, N
    assert placed.bound is Bound.MEMORY
    assert placed.times is None


def test_branch_fraction_makes_the_crossover_unknown() -> None:
    p = fraction_symbol("p")
    placed = place(p * n**2, n, "fp64", device("bluegene-q"))
    assert placed.crossover.kind is CrossoverKind.UNKNOWN
    assert placed.bound is Bound.DEPENDS_ON_SIZE


def test_precision_fallback_is_noted() -> None:
    placed = place(2 * n, 8 * n, "bf16", device("v100-pcie"))
    assert placed.precision == "fp32"
    assert placed.precision_requested == "bf16"
    assert placed.notes


def test_cache_level_placement_uses_its_bandwidth() -> None:
    placed = place(2 * n, 32 * n, "fp64", device("haswell"), memory_level="L2")
    assert placed.bandwidth_bytes_per_s == 597.01e9
    assert placed.attainable_flops_per_s == pytest.approx(597.01e9 / 16)


def test_deep_nest_crossover_is_isolated_not_factored() -> None:
    """Degree 7: no closed form, so the root is isolated and bisected (a 200-deep nest
    took seconds to factor); its value, and the first integer past it, stay exact."""
    ridge = sympy.Rational(64, 9)  # Blue Gene/Q, fp64
    placed = place(n**7, 8 * n, "fp64", device("bluegene-q"))
    crossing = placed.crossover
    assert crossing.kind is CrossoverKind.AT
    assert crossing.size_exact is None
    root = float((8 * ridge) ** sympy.Rational(1, 6))  # AI = n**6/8
    assert crossing.size == pytest.approx(root, rel=1e-14)
    assert crossing.first_integer_size == 2  # root 1.9...: compute-bound from n = 2 on
    assert crossing.compute_bound_above


def test_deep_nest_with_a_rational_crossover_keeps_it_exact() -> None:
    """AI = (n**6 + n)/(n**5 + 1) = n: the gap (n - ridge)(n**5 + 1) has degree 6, so its
    root is isolated, and being rational it still comes out exact: the ridge itself."""
    placed = place(n**6 + n, n**5 + 1, "fp64", device("bluegene-q"))
    assert placed.crossover.size_exact == sympy.Rational(64, 9)
    assert placed.crossover.size == 64 / 9
    assert placed.crossover.first_integer_size == 8


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=2, max_size=5).filter(lambda c: c[0] != 0))
def test_isolated_roots_agree_with_exact_roots(coefficients: list[int]) -> None:
    """Where both are cheap (degree <= 4), isolation gives sympy's positive real roots,
    the rational ones exactly."""
    x = sympy.Symbol("x", positive=True)
    poly = sympy.Poly(coefficients, x)
    exact = sorted({r for r in poly.real_roots() if r.is_positive}, key=float)
    isolated = _isolated_roots(poly)
    assert len(isolated) == len(exact)
    for root, value in zip(isolated, exact, strict=True):
        assert root.value == pytest.approx(float(value), rel=1e-14, abs=1e-300)
        if root.exact is not None or value.is_rational:
            assert root.exact == value  # a rational root is always found exactly
        assert root.floor <= value <= root.ceiling
        assert root.ceiling - root.floor == (0 if value.is_integer else 1)


def test_a_limit_sympy_cannot_take_makes_the_crossover_unknown() -> None:
    """Found by the coverage-guided fuzzer: with `n` given, a footprint bound `Min(trip, n)`
    of an unknown trip count left an expression whose limit sympy raises on."""
    T, trip = size_symbol("T"), trip_symbol("trip_L7")
    flops = 3 * T * n - 6 * T - 15 * n + 30
    traffic = 16 * n + 16 * trip - 8 * sympy.Min(trip, n - 2) - 8 * sympy.Min(trip, n - 1) - 16
    placed = place(flops, traffic, "fp64", device("h100"), sizes={"n": 4096})
    assert placed.bound is Bound.DEPENDS_ON_SIZE
    assert placed.times is None


def test_a_small_size_correction_leaves_the_verdict() -> None:
    """`Max(0, 4 - N)` (an exact footprint below a gap) vanishes past N = 4: the crossover is
    the one of the polynomial, not unknown."""
    memory = place(N, 16 * N - 8 * sympy.Max(0, 4 - N) - 16, "fp64", device("h100"))
    assert memory.crossover.kind is CrossoverKind.NEVER
    assert memory.bound is Bound.MEMORY
    matmul = place(2 * N**3, 32 * N**2 - 8 * sympy.Max(0, 2 - N), "fp64", device("h100"))
    assert matmul.crossover.kind is CrossoverKind.AT
    assert matmul.crossover.first_integer_size == 163  # N/16 >= 34e12/3.35e12 = 10.15
