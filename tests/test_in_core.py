"""The in-core ceiling (P_max): unpaired adds and multiplies, divisions, special functions."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from golden import FIXTURES, analyze_fixture

from aiscan.analysis.flops import FlopCounts
from aiscan.errors import UsageError
from aiscan.ir.symbols import size_symbol
from aiscan.roofline.devices import Device, load_device_file, load_devices
from aiscan.roofline.in_core import Limiter, in_core_ceiling
from aiscan.roofline.placement import Bound, place

n = size_symbol("n")


def device(name: str) -> Device:
    return load_devices().get(name)


def fixture_flops(stem: str, function: str) -> FlopCounts:
    analyses = analyze_fixture(FIXTURES / "c" / f"{stem}.c", {}, write_allocate=False)
    return analyses[function].flops


def ceiling_of(stem: str, function: str, device_name: str, precision: str = "fp64") -> float:
    dev = device(device_name)
    peak = dev.peak(precision)
    assert peak is not None
    result = in_core_ceiling(fixture_flops(stem, function), peak, peak.dense_flops_per_s)
    assert result.flops_per_s is not None
    return result.flops_per_s


def test_daxpy_pairs_every_add_with_a_multiply_and_keeps_its_h100_placement() -> None:
    flops = fixture_flops("daxpy", "daxpy")
    h100 = device("h100")
    placed = place(flops.total, 24 * n, "fp64", h100, sizes={"n": 4096}, flop_mix=flops)
    assert placed.in_core is not None and placed.in_core.limiter is Limiter.FMA
    assert placed.in_core.flops_per_s == 34e12
    assert placed.attainable_flops_per_s == pytest.approx(279.17e9, rel=1e-4)
    assert placed.ridge_flops_per_byte == pytest.approx(34e12 / 3.35e12)


def test_adds_alone_reach_half_the_fma_peak() -> None:
    assert ceiling_of("vector_add", "vector_add", "epyc-9654") == pytest.approx(3.6864e12 / 2)
    assert ceiling_of("vector_add", "vector_add", "h100") == pytest.approx(17e12)


def test_stencil_of_eight_adds_and_one_multiply_reaches_nine_sixteenths() -> None:
    # 9 FLOPs in 8 issue slots (one FMA, seven lone adds) of the 16 FLOPs they could do
    assert ceiling_of("stencil_cross9", "stencil_cross9", "h100") == pytest.approx(34e12 * 9 / 16)


def test_fma_call_counts_as_a_pair_among_the_other_operations() -> None:
    # specials: 3 adds (two + and fma's), 2 multiplies -> 5 FLOPs in 3 slots = 5/6 of peak
    result = in_core_ceiling(fixture_flops("math_calls", "specials"), None, 6e12)
    assert result.flops_per_s == pytest.approx(5e12)
    assert result.limiter is Limiter.UNPAIRED
    assert result.notes == (
        "special functions: no throughput in the device file; left out of the ceiling, "
        "an upper bound",
    )


def test_special_functions_have_their_own_ceiling_where_the_device_gives_it() -> None:
    peak = device("h100").peak("fp32")
    assert peak is not None and peak.special_ops_per_s == 4.1875e12
    assert peak.special_source is not None and "Programming Guide" in peak.special_source
    flops = fixture_flops("sigmoid_f32", "sigmoid")
    result = in_core_ceiling(flops, peak, peak.dense_flops_per_s)
    # 2 FLOPs per expf at 4.1875e12 expf/s
    assert result.flops_per_s == pytest.approx(8.375e12)
    assert result.limiter is Limiter.SPECIAL
    assert result.notes == (
        "divisions: no throughput in the device file; left out of the ceiling, an upper bound",
    )


def test_division_throughput_from_a_device_file_is_a_ceiling(tmp_path: Path) -> None:
    path = tmp_path / "box.toml"
    path.write_text(
        'schema = 1\nname = "Box"\nkind = "cpu"\nwrite_allocate = true\n'
        "[peaks.fp64]\ndense_flops_per_s = 1e12\nsource = 'made up for the test'\n"
        "divide_ops_per_s = 1e11\ndivide_source = 'made up for the test'\n"
        "[[memory]]\nname = 'DRAM'\nlevel = 'dram'\nbandwidth_bytes_per_s = 1e11\n"
        "source = 'made up for the test'\n"
    )
    box = load_device_file(path)
    flops = fixture_flops("math_calls", "divides")  # n divisions, nothing else
    placed = place(flops.total, 16 * n, "fp64", box, sizes={"n": 10**6}, flop_mix=flops)
    assert placed.in_core is not None
    assert placed.in_core.limiter is Limiter.DIVISION
    assert placed.in_core.flops_per_s == pytest.approx(1e11)
    assert placed.in_core.notes == ()


def test_an_unpaired_mix_turns_a_memory_bound_verdict_compute_bound() -> None:
    # AI 6 F/B on epyc-9654: below the FMA ridge (8) but above the adds-only ridge (4)
    epyc = device("epyc-9654")
    zero = sympy.Integer(0)
    adds = FlopCounts(6 * n, 6 * n, zero, zero, zero, zero)
    plain = place(6 * n, n, "fp64", epyc, sizes={"n": 1000})
    mixed = place(6 * n, n, "fp64", epyc, sizes={"n": 1000}, flop_mix=adds)
    assert plain.bound is Bound.MEMORY and plain.attainable_flops_per_s == pytest.approx(2.7648e12)
    assert mixed.bound is Bound.COMPUTE
    assert mixed.attainable_flops_per_s == pytest.approx(1.8432e12)
    assert mixed.fraction_of_peak == pytest.approx(0.5)
    assert mixed.peak_flops_per_s == 3.6864e12


def test_a_mix_that_depends_on_a_branch_fraction_has_no_ceiling() -> None:
    flops = fixture_flops("branches", "relu_scale")
    result = in_core_ceiling(flops, None, 1e12)
    assert result.limiter is Limiter.UNKNOWN and result.flops_per_s is None
    placed = place(flops.total, 16 * n, "fp64", device("h100"), flop_mix=flops)
    assert placed.peak_flops_per_s == 34e12  # the plain peak, as before


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ("special_ops_per_s = 1e11\n", "peaks.fp64.special_source"),
        ("divide_source = 'a source without a figure'\n", "peaks.fp64.divide_source"),
        ("special_ops_per_s = -1.0\nspecial_source = 'negative'\n", "special_ops_per_s"),
    ],
)
def test_a_throughput_needs_a_positive_figure_and_its_source(
    tmp_path: Path, extra: str, field: str
) -> None:
    path = tmp_path / "box.toml"
    path.write_text(
        'schema = 1\nname = "Box"\nkind = "cpu"\nwrite_allocate = true\n'
        f"[peaks.fp64]\ndense_flops_per_s = 1e12\nsource = 'made up'\n{extra}"
        "[[memory]]\nname = 'DRAM'\nlevel = 'dram'\nbandwidth_bytes_per_s = 1e11\n"
        "source = 'made up'\n"
    )
    with pytest.raises(UsageError, match=field):
        load_device_file(path)


_m, _ni, _nj, _nk = (size_symbol(name) for name in ("m", "ni", "nj", "nk"))
_NI, _NJ, _NK = (size_symbol(name) for name in ("NI", "NJ", "NK"))
_GEMM_SIZES = {"NI": 1000, "NJ": 1100, "NK": 1200}


@pytest.mark.parametrize(
    ("count", "total", "sizes", "share", "decided"),
    [
        # PolyBench/C's shares (issue 33): gemm at its header's sizes, and as sizes grow
        (
            2 * _NI * _NJ * _NK + _NI * _NJ,
            3 * _NI * _NJ * _NK + _NI * _NJ,
            _GEMM_SIZES,
            0.6667592335462371,
            True,
        ),
        (_ni * _nj * _nk, 3 * _ni * _nj * _nk + _ni * _nj, _GEMM_SIZES, 1 / 3, True),
        (2 * n**3 / 3 - n**2 / 2 - n / 6, n**3 / 6 - n / 6, None, 4.0, True),  # lu
        (_m, _m * n + _m, None, 0.0, True),  # covariance
        (2 * _m * n**2 + _m * n, _m * n, None, None, True),  # gramschmidt: grows without bound
        (n**2 - _m**2 + n, n**2 - _m**2 + _m, None, 1.0, False),  # leading terms cancel: sympy's
        (_NI * _nj, _NI * _nj + _nj, _GEMM_SIZES, 1000 / 1001, False),  # some sizes given: sympy's
    ],
)
def test_a_share_of_polynomials_is_sympys(
    monkeypatch: pytest.MonkeyPatch,
    count: object,
    total: object,
    sizes: object,
    share: object,
    decided: bool,
) -> None:
    from aiscan.roofline import in_core

    assert (in_core._share_of_polys(count, total, sizes) is not None) == decided  # type: ignore[arg-type]

    shortcut = in_core._share(count, total, sizes)  # type: ignore[arg-type]
    monkeypatch.setattr(in_core, "_share_of_polys", lambda count, total, sizes: None)
    assert shortcut == in_core._share(count, total, sizes) == share  # type: ignore[arg-type]
