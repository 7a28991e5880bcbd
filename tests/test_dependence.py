"""Loop-carried dependency chains: found in C, timed with a device's core latencies, and
placed as the in-core bound they are (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.analysis.dependence import compiler_flags, find_chains
from aiscan.cli import main
from aiscan.frontends.c.frontend import lower_c_source
from aiscan.roofline.devices import load_devices

SOURCES = """
double dot(int n, const double *a, const double *b) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}
void seidel(int n, double A[n][n]) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            A[i][j] = (A[i-1][j-1] + A[i-1][j] + A[i-1][j+1] + A[i][j-1] + A[i][j]
                       + A[i][j+1] + A[i+1][j-1] + A[i+1][j] + A[i+1][j+1]) / 9.0;
}
void dgemm(int n, double A[n][n], double B[n][n], double C[n][n]) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                C[i][j] += A[i][k] * B[k][j];
}
void daxpy(int n, double a, const double *restrict x, double *restrict y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
void every_other(int n, double a, double *restrict x, const double *restrict b) {
    for (int i = 2; i < n; i++)
        x[i] = a * x[i - 2] + b[i];
}
void temporary(int n, const double *restrict a, const double *restrict b, double *restrict c) {
    for (int i = 0; i < n; i++) {
        double t = a[i];
        t += b[i];
        c[i] = t;
    }
}
"""


def _chains(flags: str) -> dict[str, list[tuple[str, str, tuple[str, ...], int, str, int]]]:
    module = lower_c_source(SOURCES, "chains.c")
    found: dict[str, list[tuple[str, str, tuple[str, ...], int, str, int]]] = {}
    for function in module.functions:
        for region in function.regions:
            for c in find_chains(region.body, compiler_flags(flags)):
                found.setdefault(function.name, []).append(
                    (c.kind, c.variable, c.operations, c.distance, str(c.iterations), c.line)
                )
    return found


def test_chains_under_plain_o3_have_no_fma_and_no_reassociation() -> None:
    assert _chains("-O3") == {
        "dot": [("accumulator", "s", ("add",), 1, "n", 5)],
        "seidel": [("recurrence", "A", ("add",) * 6 + ("div",), 1, "n**2 - 4*n + 4", 11)],
        "dgemm": [("accumulator", "C", ("add",), 1, "n**3", 18)],
        "every_other": [("recurrence", "x", ("mul", "add"), 2, "n - 2", 26)],
    }


def test_an_fma_target_fuses_the_accumulating_multiply_add() -> None:
    found = _chains("-O3 -march=native")
    assert found["dot"] == [("accumulator", "s", ("fma",), 1, "n", 5)]
    assert found["dgemm"][0][2] == ("fma",)
    assert found["every_other"] == [("recurrence", "x", ("fma",), 2, "n - 2", 26)]


def test_reassociation_breaks_accumulators_but_not_recurrences() -> None:
    found = _chains("-O3 -march=native -ffast-math")
    assert set(found) == {"seidel", "every_other"}
    # The sum reordered (one add on the chain), the division by 9 a multiply by 1/9.
    assert found["seidel"][0][2] == ("add", "mul")


def test_compiler_flags() -> None:
    plain = compiler_flags(None)
    assert (plain.text, plain.reassociate, plain.contract) == ("-O3", False, False)
    fast = compiler_flags("-Ofast -march=znver4")
    assert (fast.reassociate, fast.contract) == (True, True)
    iso = compiler_flags("-O3 -march=native -std=c11")
    assert not iso.contract
    assert not compiler_flags("-O2 -mfma -ffp-contract=off").contract


def _placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], function: str, *options: str
) -> dict[str, object]:
    source = tmp_path / "chains.c"
    source.write_text(SOURCES)
    argv = ["analyze", str(source), "--format", "json", "--no-cache", *options]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    (entry,) = [f for f in report["files"][0]["functions"] if f["name"] == function]
    (placed,) = entry["nests"][0]["placement"]
    assert isinstance(placed, dict)
    return placed


def test_a_serial_dot_product_is_bound_by_its_add_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placed = _placement(
        tmp_path, capsys, "dot", "--device", "epyc", "--size", "n=100000000",
        "--cflags", "-O3 -march=native",
    )  # fmt: skip
    # 1e8 dependent FMAs of 4 cycles at the 3.7 GHz boost clock: 108 ms at the least.
    assert placed["times"]["lower_bound_s"] == pytest.approx(1e8 * 4 / 3.7e9)  # type: ignore[index]
    assert placed["bound"] == "compute"
    assert placed["bound_name"] == "in-core (dependency chain, line 5)"
    chain = placed["in_core"]["chain"]  # type: ignore[index]
    assert chain["line"] == 5 and chain["cycles_per_iteration"] == 4
    assert placed["in_core"]["limiter"] == "dependency chain"  # type: ignore[index]


def test_fast_math_frees_the_dot_product_to_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placed = _placement(
        tmp_path, capsys, "dot", "--device", "epyc", "--size", "n=100000000",
        "--cflags", "-O3 -march=native -ffast-math",
    )  # fmt: skip
    assert placed["bound_name"] == "DDR5-4800 (12 channels)"
    assert placed["in_core"]["chain"] is None  # type: ignore[index]
    # 16 bytes an element from DRAM at one core's 64 GB/s.
    assert placed["times"]["lower_bound_s"] == pytest.approx(16e8 / 64e9)  # type: ignore[index]


def test_naive_dgemm_waits_on_its_fma_chain_and_says_so_in_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "chains.c"
    source.write_text(SOURCES)
    argv = ["analyze", str(source), "--no-cache", "--device", "epyc", "--size", "n=1024",
            "--cflags", "-O3 -march=native"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    dgemm = text[text.index("function dgemm") :]
    assert (
        "epyc-9654 fp64, 1 thread (no OpenMP pragma on the nest): ridge 0.02891 F/B, "
        "bound in-core (dependency chain, line 18)"
    ) in dgemm
    assert "dependency chain, line 18: `C` accumulates in the loop over k (line 17): fma" in dgemm
    assert "the bandwidth roofline is optimistic here" in dgemm
    assert "(lower and upper bounds on an ideal machine, not a prediction)" in dgemm


def test_a_gauss_seidel_sweep_waits_on_six_adds_and_a_division(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    haswell = load_devices().get("haswell")
    latencies = haswell.core.latency("fp64")
    assert latencies is not None and haswell.core.clock_hz == 3.3e9
    assert (latencies.add_cycles, latencies.divide_cycles) == (3, 10)
    placed = _placement(
        tmp_path, capsys, "seidel", "--device", "haswell", "--size", "n=4000"
    )  # fmt: skip
    cycles = 6 * 3 + 10
    assert placed["in_core"]["chain"]["cycles_per_iteration"] == cycles  # type: ignore[index]
    assert placed["times"]["lower_bound_s"] == pytest.approx(3998**2 * cycles / 3.3e9)  # type: ignore[index]
    assert placed["bound_name"] == "in-core (dependency chain, line 11)"
