"""The one-kernel path imports no sympy: a polynomial kernel placed on a CPU is carried in
`aiscan.algebra` from the C frontend to the report (issue 16: importing sympy took more
than the rest of such a run together). A change that reaches for sympy on that path fails
here, not silently in the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The file is analyzed in this process, not in a forked worker: a worker's imports never
# reach this process's sys.modules, and the gate would pass whatever the worker imported.
_PROBE = """
import contextlib, io, sys
import aiscan.scan
aiscan.scan.can_fork = lambda: False
from aiscan.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(code, "sympy" in sys.modules)
print(out.getvalue())
"""


@pytest.mark.parametrize(
    "kernel, arguments",
    [
        ("fixtures/c/daxpy.c", ["--device", "haswell"]),
        ("fixtures/c/daxpy.c", ["--device", "haswell", "--format", "json"]),
    ],
)
def test_a_polynomial_kernel_is_analyzed_without_sympy(kernel: str, arguments: list[str]) -> None:
    command = [sys.executable, "-c", _PROBE, "analyze", kernel, "--no-cache", *arguments]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    assert "1/12" in report


# A matrix-vector product: its compulsory intensity is a ratio of two polynomials, which
# sympy's division and cancellation built until the `Quotient` type (issue 33).
_DGEMV = """void dgemv(int n, int m, const double a[n][m], const double x[m], double y[n])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            y[i] = y[i] + a[i][j] * x[j];
}
"""


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_rational_intensity_is_analyzed_without_sympy(tmp_path: Path, form: str) -> None:
    kernel = tmp_path / "dgemv.c"
    kernel.write_text(_DGEMV)
    command = [sys.executable, "-c", _PROBE, "analyze", str(kernel), "--no-cache"]
    command += ["--format", form]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    assert "m*n/(4*m*n + 4*m + 8*n)" in report


@pytest.mark.parametrize(("form", "limit"), [("text", "→ ∞ as sizes grow"), ("json", '"oo"')])
def test_an_unbounded_intensity_is_analyzed_without_sympy(form: str, limit: str) -> None:
    """Naive dgemm's `n/12` grows without bound: its limit is `algebra.INFINITY`."""
    command = [sys.executable, "-c", _PROBE, "analyze", "fixtures/c/dgemm_ijk.c", "--no-cache"]
    command += ["--format", form]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    assert "n/12" in report
    assert limit in report


@pytest.mark.parametrize(
    ("kernel", "form", "level_intensity"),
    [
        ("dgemv", "text", "L2 m/(8*(m + 8)) F/B"),
        ("dgemv", "json", '"expr": "m/(8*m + 64)"'),
        ("fixtures/c/dgemm_ijk.c", "text", "L2 n/(4*(9*n + 16)) F/B"),
        ("fixtures/c/dgemm_ijk.c", "json", '"breaks_at": 14562.666666666666'),
    ],
)
def test_a_cpu_placement_is_made_without_sympy(
    tmp_path: Path, kernel: str, form: str, level_intensity: str
) -> None:
    """Placed on a CPU with the cache model (issue 33): the level intensities in the form
    sympy's `simplify` wrote, the layer conditions' `breaks_at` (sympy's `nroots`) and the
    crossovers, all without sympy."""
    if kernel == "dgemv":
        kernel = str(tmp_path / "dgemv.c")
        Path(kernel).write_text(_DGEMV)
    command = [sys.executable, "-c", _PROBE, "analyze", kernel, "--no-cache"]
    command += ["--device", "xeon-8480plus", "--format", form]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    assert level_intensity in report


_MODULES_PROBE = _PROBE.replace(
    '"sympy" in sys.modules', '"sympy" in sys.modules, "mpmath" in sys.modules'
)


@pytest.mark.parametrize(("form", "mpmath"), [("text", False), ("json", True)])
def test_breaking_sizes_are_solved_only_for_the_json_report(form: str, mpmath: bool) -> None:
    """A layer condition's `breaks_at` (a root of `8*n**2 + 16*n` = capacity: mpmath's
    `polyroots`) is written only by the JSON report, and is solved only when read: the text
    report of naive dgemm on a CPU does not import mpmath."""
    command = [sys.executable, "-c", _MODULES_PROBE, "analyze", "fixtures/c/dgemm_ijk.c"]
    command += ["--no-cache", "--device", "xeon-8480plus", "--format", form]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == f"0 False {mpmath}", result.stderr
    assert ('"breaks_at": 54.4346462061408' in report) == mpmath


# A 2-D Jacobi stencil (the benchmark's): its compulsory bytes hold the footprint's
# small-size hinges `Max(0, 4 - m)*Max(0, 4 - n)`, which sympy's `Max` carried until
# `algebra.hinge` (issue 33).
_JACOBI2D = """void jacobi2d(int m, int n, double s, const double a[m][n], double b[m][n])
{
    for (int j = 1; j < m - 1; ++j)
        for (int i = 1; i < n - 1; ++i)
            b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * s;
}
"""


def _report_without_sympy(*arguments: str) -> str:
    """`aiscan analyze --no-cache` with `arguments`, once sympy is shown unimported."""
    command = [sys.executable, "-c", _PROBE, "analyze", "--no-cache", *arguments]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    return report


def _jacobi2d_report(tmp_path: Path, *arguments: str) -> str:
    """The benchmark's jacobi2d analyzed with `arguments`, without sympy."""
    kernel = tmp_path / "jacobi2d.c"
    kernel.write_text(_JACOBI2D)
    return _report_without_sympy(str(kernel), *arguments)


def test_a_hinged_footprint_is_counted_without_sympy(tmp_path: Path) -> None:
    """The counts, the cancelled intensity with its hinges and its limit, in the JSON report
    (placed, below)."""
    report = _jacobi2d_report(tmp_path, "--format", "json")
    expr = "(m*n - 2*m - 2*n + 4)/(4*m*n - 4*m - 4*n - 2*Max(0, 4 - m)*Max(0, 4 - n))"
    assert f'"expr": "{expr}", "limit": "1/4"' in report
    assert '"total": "16*m*n - 16*m - 16*n - 8*Max(0, 4 - m)*Max(0, 4 - n)"' in report


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("text", "L2 n/(10*(n + 8)) F/B, L3 (LLC) n/(10*(n + 8)) F/B"),
        ("json", '"total": "8*m*n + 8*m + 24*n"'),
    ],
)
def test_a_polybench_kernel_with_its_header_is_placed_without_sympy(
    form: str, expected: str
) -> None:
    """PolyBench/C's atax as the benchmark ships it (`POLYBENCH_2D` extents, loops to
    `POLYBENCH_LOOP_BOUND`): its array extents (`N + 0`), the intersections of its rows'
    boxes, the rank of its subscripts and its exact counts by isl no longer import sympy
    (issue 33: every PolyBench fixture did)."""
    arguments = ["-I", "fixtures/c/polybench", "--device", "xeon-8480plus", "--format", form]
    assert expected in _report_without_sympy("fixtures/c/polybench_atax.c", *arguments)


def test_a_hinged_stencil_is_placed_on_a_cpu_without_sympy(tmp_path: Path) -> None:
    """jacobi2d placed on a CPU, as JSON (issue 33): the hinged level ratio's `simplify`
    (`(n - 2)/(2*(5*n - Max(0, 4 - n) - 8))`), its limit 1/10 (the L2 roof's attainable
    rate as the sizes grow) and the crossover, whose gap holds the hinge, without sympy."""
    report = _jacobi2d_report(tmp_path, "--device", "xeon-8480plus", "--format", "json")
    level = '"bytes": "40*m*n - 8*m*Max(0, 4 - n) - 64*m - 80*n + 16*Max(0, 4 - n) + 128"'
    assert f'{level}, "intensity_flops_per_byte": null, "attainable_flops_per_s": null, ' in report
    assert '"attainable_limit_flops_per_s": 7752000000.0}' in report  # 1/10 x 77.52 GB/s
    assert '"crossover": {"kind": "never", "size_names": ["m", "n"]' in report


def test_a_hinged_stencils_placed_text_report_is_made_without_sympy(tmp_path: Path) -> None:
    """The benchmark's run of jacobi2d (issue 33: one kernel placed on a CPU, text report):
    the placement's hinged ratios and the text report's factors together, without sympy."""
    report = _jacobi2d_report(tmp_path, "--device", "xeon-8480plus")
    assert "roof FP64 vector units (loop code); cache bytes 8*(m - 2)*(5*n - 8) (for n >= 4)" in (
        report
    )
    assert "L2 (n - 2)/(2*(5*n - 8)) (for n >= 4) F/B" in report
    assert "memory-bound at DRAM (DDR5-4800, 8 channels)" in report


def test_a_stencils_text_report_is_factored_without_sympy(tmp_path: Path) -> None:
    """The text report writes the benchmark's jacobi2d counts as their factors, and its
    hinged intensity without the hinges past their bend, with `factored_text` (issue 33:
    `sympy.factor` imported sympy for every such kernel)."""
    report = _jacobi2d_report(tmp_path)
    assert "FLOPs       4*(m - 2)*(n - 2)   [add 3*(m - 2)*(n - 2)" in report
    assert "(m - 2)*(n - 2)/(4*(m*n - m - n)) (for m >= 4, n >= 4)" in report


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [
        ("2mm", "ni*nl*(2*nj + 1)/(8*(ni*nj + 2*ni*nl + nj*nl))"),
        ("cholesky", "(n - 1)*(2*n + 5)/(16*(n + 1)*(2*n + 1))"),
        ("covariance", "8*m*(m + 1)*(2*n + 1)"),
        ("gemm", "ni*nj*(3*nk + 1)/(8*(2*ni*nj + ni*nk + nj*nk))"),
        ("lu", "4*n*(n - 1)*(8*n + 5)/3"),
        ("syrk", "(3*m + 1)*(n + 1)/(16*(m + n + 1))"),
        ("jacobi_2d", "5*tsteps*(n - 2)/(4*(3*n + 2))"),
    ],
)
def test_a_polybench_text_report_is_factored_without_sympy(kernel: str, expected: str) -> None:
    """PolyBench/C kernels with their header, text report without a device: their counts
    and intensities factored as `sympy.factor` writes them, without sympy (issue 33)."""
    report = _report_without_sympy(f"fixtures/c/polybench_{kernel}.c", "-I", "fixtures/c/polybench")
    assert expected in report


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("text", "L2 5*(n - 2)/(8*(5*n - 8)) F/B"),
        ("json", '"expr": "(5*n - 10)/(40*n - 64)", "limit": "1/8"'),
    ],
)
def test_polybench_jacobi_2d_is_placed_on_a_cpu_without_sympy(form: str, expected: str) -> None:
    """PolyBench/C's jacobi_2d with its header on the Xeon (issue 33): its level ratio of
    two plain sums sharing `n - 2` is `simplify`'s form without sympy, and the union of
    its rows' boxes, its shares and its sums are decided on `Poly`."""
    arguments = ["-I", "fixtures/c/polybench", "--device", "xeon-8480plus", "--format", form]
    assert expected in _report_without_sympy("fixtures/c/polybench_jacobi_2d.c", *arguments)


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [
        ("2mm", "L2 (2*nj + 1)/(8*(9*nj + 32)) F/B"),
        ("syrk", "L2 (3*m + 1)*(n + 1)/(16*(5*m*n + 13*m + n + 1)) F/B"),
        ("covariance", "L2 (n + 1)/(64*(n + 4)) F/B"),
        ("gemm", "L2 nj*(3*nk + 1)/(8*(3*nj*nk + 2*nj + 8*nk)) F/B"),
    ],
)
def test_polybench_positive_sums_are_placed_on_a_cpu_without_sympy(
    kernel: str, expected: str
) -> None:
    """2mm, syrk, covariance and gemm with their header on the Xeon (issue 33): their level
    ratios, two sums of positive terms sharing only numbers and monomials, are written in
    `simplify`'s form without sympy (gemm's with a monomial of the top's own)."""
    arguments = ["-I", "fixtures/c/polybench", "--device", "xeon-8480plus"]
    assert expected in _report_without_sympy(f"fixtures/c/polybench_{kernel}.c", *arguments)
