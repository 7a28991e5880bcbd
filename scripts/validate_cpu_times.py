"""Time C kernels on this machine and set them against aiscan's lower bounds (issue 32).

Compiles a few kernels (naive dgemm, triad, daxpy, a dot product, a 7-point stencil in its
VLA and its flat form) with `gcc -O3 -march=native`, runs each single-threaded at sizes
several times the last-level cache (read from Linux sysfs), and triad, stencil and dgemm
again with `#pragma omp parallel for` (`-fopenmp`) on every core; in the same run it
measures this machine, one core and all (`aiscan calibrate`: one thread and every thread),
and the latencies of dependent adds, multiplies, FMAs and divisions (a compiled chain of
each). Then places every kernel with aiscan against that calibrated file and prints, per
kernel, the threads aiscan assumed, the median and fastest measured time, the lower bound,
their ratios, what aiscan says bounds it and its main-memory bytes. A kernel measured
below its bound would be a bug in the model; one far above it is named with the reason.

    python scripts/validate_cpu_times.py [--runs 5] [--scale 4] [--keep DIR]

Nothing here runs in the test suite: timings belong in a script, not in assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiscan.calibrate import calibrate, device_toml
from aiscan.host_caches import read_host_caches
from aiscan.roofline.devices import load_device_file

CFLAGS = "-O3 -march=native"


@dataclass(frozen=True)
class Kernel:
    """A kernel source aiscan analyzes, the harness that times it, and its size."""

    name: str
    function: str
    source: str
    harness: str
    """The body of `main` after the size `n` is read: allocate, initialise, time."""
    size_for: Callable[[int, int], int]
    """n from the last-level cache in bytes and the scale (arrays `scale` times the LLC)."""
    note: str = ""
    openmp: bool = False
    """Built with -fopenmp and run on every core: the source has its `omp parallel for`."""
    runs: int | None = None
    """Timed runs where fewer than `--runs` (naive dgemm takes seconds a run)."""


TIMER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
#define TIME(call, runs) do { \
    call; \
    for (int r = 0; r < (runs); r++) { \
        double t0 = now(); call; printf("%.9f\n", now() - t0); \
    } \
} while (0)
"""

OMP = "#pragma omp parallel for\n    "

TRIAD = """void triad(long n, double s, double *restrict a, const double *restrict b,
           const double *restrict c) {
    PRAGMAfor (long i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}
"""

STENCIL7 = """void stencil7(int n, const double u[n][n][n], double out[n][n][n]) {
    PRAGMAfor (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++)
                out[i][j][k] = 0.4 * u[i][j][k]
                    + 0.1 * (u[i-1][j][k] + u[i+1][j][k] + u[i][j-1][k]
                             + u[i][j+1][k] + u[i][j][k-1] + u[i][j][k+1]);
}
"""

STENCIL7_FLAT = """#include <stddef.h>
void stencil7(int n, const double *restrict u, double *restrict out) {
    const size_t row = n, plane = (size_t)n * n;
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++) {
                size_t c = i * plane + j * row + k;
                out[c] = 0.4 * u[c] + 0.1 * (u[c - plane] + u[c + plane] + u[c - row]
                                             + u[c + row] + u[c - 1] + u[c + 1]);
            }
}
"""

DGEMM = """void dgemm(int n, const double A[n][n], const double B[n][n], double C[n][n]) {
    PRAGMAfor (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                C[i][j] += A[i][k] * B[k][j];
}
"""


def _serial(source: str) -> str:
    return source.replace("PRAGMA", "")


def _parallel(source: str) -> str:
    return source.replace("PRAGMA", OMP)


TRIAD_HARNESS = """double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *c = malloc(n * sizeof *c);
    for (long i = 0; i < n; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
    TIME(triad(n, 3.0, a, b, c), runs);
    fprintf(stderr, "%g\\n", a[n / 2]);"""

STENCIL7_HARNESS = """double (*u)[n][n] = malloc(sizeof(double[n][n][n]));
    double (*out)[n][n] = malloc(sizeof(double[n][n][n]));
    for (long i = 0; i < (long)n * n * n; i++) {
        ((double *)u)[i] = i % 7;
        ((double *)out)[i] = 0;
    }
    TIME(stencil7(n, (void *)u, (void *)out), runs);
    fprintf(stderr, "%g\\n", out[n / 2][n / 2][n / 2]);"""

DGEMM_HARNESS = """double (*A)[n] = malloc(sizeof(double[n][n]));
    double (*B)[n] = malloc(sizeof(double[n][n])), (*C)[n] = malloc(sizeof(double[n][n]));
    for (long i = 0; i < (long)n * n; i++) {
        ((double *)A)[i] = 1;
        ((double *)B)[i] = 1e-9;
        ((double *)C)[i] = 0;
    }
    TIME(dgemm(n, A, B, C), runs);
    fprintf(stderr, "%g\\n", C[n / 2][n / 2]);"""

DGEMM_NOTE = (
    "a chain of dependent FMAs through C[i][j] in the k loop, and a column walk of B; "
    "n = 1024 (24 MB, below the LLC): n = 2048 takes over a minute a run"
)


def _stencil_size(llc: int, scale: int) -> int:
    return round((scale * llc / 16) ** (1 / 3))


KERNELS = (
    Kernel("triad", "triad", _serial(TRIAD), TRIAD_HARNESS, lambda llc, scale: scale * llc // 24),
    Kernel(
        "daxpy",
        "daxpy",
        """void daxpy(long n, double a, const double *restrict x, double *restrict y) {
    for (long i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
""",
        """double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (long i = 0; i < n; i++) { x[i] = 1; y[i] = 2; }
    TIME(daxpy(n, 1e-9, x, y), runs);
    fprintf(stderr, "%g\\n", y[n / 2]);""",
        lambda llc, scale: scale * llc // 16,
    ),
    Kernel(
        "dot",
        "dot",
        """double dot(long n, const double *restrict x, const double *restrict y) {
    double s = 0.0;
    for (long i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
""",
        """double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double s = 0;
    for (long i = 0; i < n; i++) { x[i] = 1; y[i] = 1e-9; }
    TIME(s += dot(n, x, y), runs);
    fprintf(stderr, "%g\\n", s);""",
        lambda llc, scale: scale * llc // 16,
        "a chain of dependent FMAs: C forbids reassociating the sum without -ffast-math",
    ),
    Kernel("stencil7", "stencil7", _serial(STENCIL7), STENCIL7_HARNESS, _stencil_size),
    Kernel(
        "stencil7_flat",
        "stencil7",
        STENCIL7_FLAT,
        STENCIL7_HARNESS,
        _stencil_size,
        "the same stencil on flat arrays (u[c - plane], u[c + row], ...): delinearized",
    ),
    Kernel(
        "dgemm", "dgemm", _serial(DGEMM), DGEMM_HARNESS, lambda llc, scale: 1024, DGEMM_NOTE, runs=3
    ),
    Kernel(
        "triad_omp",
        "triad",
        _parallel(TRIAD),
        TRIAD_HARNESS,
        lambda llc, scale: scale * llc // 24,
        openmp=True,
    ),
    Kernel(
        "stencil7_omp",
        "stencil7",
        _parallel(STENCIL7),
        STENCIL7_HARNESS,
        _stencil_size,
        openmp=True,
    ),
    Kernel(
        "dgemm_omp",
        "dgemm",
        _parallel(DGEMM),
        DGEMM_HARNESS,
        lambda llc, scale: 1024,
        "the FMA chain on every core: one chain per core",
        openmp=True,
        runs=3,
    ),
)

LATENCY = r"""
#include <math.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv) {
    /* Many short chains, the fastest of each kind: on a shared machine a few
       milliseconds often run without being descheduled, a second never does. */
    long n = 1000000;
    double y = argc > 5 ? 2.0 : 1.0000001, a = argc > 5 ? 3.0 : 0.9999999, b = 1e-12;
    double x, t, best[4] = {1e9, 1e9, 1e9, 1e9};
    for (int r = 0; r < 300; r++) {
        x = 1.0; t = now(); for (long i = 0; i < n; i++) x = x + y;
        best[0] = fmin(best[0], (now() - t) / n); fprintf(stderr, "%g ", x);
        x = 1.0; t = now(); for (long i = 0; i < n; i++) x = x * a;
        best[1] = fmin(best[1], (now() - t) / n); fprintf(stderr, "%g ", x);
        x = 1.0; t = now(); for (long i = 0; i < n; i++) x = fma(x, a, b);
        best[2] = fmin(best[2], (now() - t) / n); fprintf(stderr, "%g ", x);
        x = 1.0; t = now(); for (long i = 0; i < n / 4; i++) x = y / x;
        best[3] = fmin(best[3], (now() - t) / (n / 4)); fprintf(stderr, "%g\n", x);
    }
    printf("%.6e %.6e %.6e %.6e\n", best[0], best[1], best[2], best[3]);
    return 0;
}
"""


def _compile(source: Path, output: Path, *extra: Path, openmp: bool = False) -> None:
    flags = [*CFLAGS.split(), *(["-fopenmp"] if openmp else [])]
    command = ["gcc", *flags, "-o", str(output), str(source), *map(str, extra), "-lm"]
    subprocess.run(command, check=True)


def _latencies(work: Path) -> tuple[float, float, float, float]:
    """Seconds per dependent add, multiply, FMA and division on this core."""
    source = work / "latency.c"
    source.write_text(LATENCY)
    binary = work / "latency"
    _compile(source, binary)
    done = subprocess.run([str(binary)], check=True, capture_output=True, text=True)
    add, mul, fma, div = (float(v) for v in done.stdout.split())
    return add, mul, fma, div


def _device_file(work: Path, llc: int, scale: int) -> Path:
    """Calibrate this machine (one thread and all), with the measured latencies; the best
    of 20 runs, since a shared machine's load only ever makes a run slower."""
    array_mib = max(scale * llc // 2**20, 64)
    result = calibrate(array_bytes=array_mib * 2**20, gemm_n=1024, gpu=False, repeats=20)
    seconds = _latencies(work)
    clock = result.clock_hz or 1e9
    if result.clock_hz is None:
        result.clock_hz, result.clock_source = clock, "no clock readable: 1 GHz, cycles = ns"
    cycles = tuple(s * clock for s in seconds)
    result.latencies["fp64"] = (cycles[0], cycles[1], cycles[2], cycles[3])
    result.latency_source = (
        "measured on this machine by scripts/validate_cpu_times.py: compiled chains of "
        f"dependent add, mul, fma, div ({CFLAGS}), seconds x clock"
    )
    path = work / "here.toml"
    path.write_text(device_toml(result))
    return path


def _measure(kernel: Kernel, work: Path, n: int, runs: int) -> list[float]:
    folder = work / kernel.name
    folder.mkdir()
    (folder / "kernel.c").write_text(kernel.source)
    declaration = kernel.source.split("{", 1)[0].strip() + ";"
    main = (
        f"{TIMER}\n{declaration}\nint main(int argc, char **argv) {{\n"
        f"    long n = atol(argv[1]); int runs = atoi(argv[2]);\n    {kernel.harness}\n"
        "    return 0;\n}\n"
    )
    (folder / "main.c").write_text(main)
    binary = folder / "run"
    _compile(folder / "main.c", binary, folder / "kernel.c", openmp=kernel.openmp)
    threads = str(os.cpu_count() or 1) if kernel.openmp else "1"
    done = subprocess.run(
        [str(binary), str(n), str(runs)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": threads},
    )
    return [float(line) for line in done.stdout.split()]


def _bound(kernel: Kernel, work: Path, device: Path, n: int) -> dict[str, object]:
    source = work / kernel.name / "kernel.c"
    command = [
        sys.executable, "-m", "aiscan", "analyze", str(source), "--device-file", str(device),
        "--device", "this-machine", "--size", f"n={n}", "--cflags", CFLAGS,
        "--format", "json", "--no-cache",
    ]  # fmt: skip
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    report = json.loads(done.stdout)
    (function,) = [f for f in report["files"][0]["functions"] if f["name"] == kernel.function]
    (placed,) = function["nests"][0]["placement"]
    assert isinstance(placed, dict)
    return placed


def _memory_bytes(placed: dict[str, object]) -> str:
    """The bytes the placement's last level (main memory) moves, as aiscan writes them."""
    levels = placed.get("levels")
    if not isinstance(levels, list) or not levels:
        return "?"
    return str(levels[-1].get("bytes", "?"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per kernel (median)")
    parser.add_argument("--scale", type=int, default=4, help="arrays this many times the LLC")
    parser.add_argument("--keep", metavar="DIR", help="keep sources, binaries and the device file")
    arguments = parser.parse_args()
    if shutil.which("gcc") is None:
        print("validate_cpu_times: gcc not found", file=sys.stderr)
        return 2
    caches = read_host_caches()
    llc = max((c.capacity_bytes for c in caches), default=32 * 2**20)
    print(f"last-level cache {llc / 2**20:g} MiB (sysfs); arrays about {arguments.scale}x that")
    work = Path(arguments.keep or tempfile.mkdtemp(prefix="aiscan-cpu-times-"))
    work.mkdir(parents=True, exist_ok=True)
    device = _device_file(work, llc, arguments.scale)
    print(f"calibrated: {device}")
    rows = []
    for kernel in KERNELS:
        n = kernel.size_for(llc, arguments.scale)
        times = _measure(kernel, work, n, kernel.runs or arguments.runs)
        placed = _bound(kernel, work, device, n)
        bound = placed["times"]["lower_bound_s"]  # type: ignore[index]
        rows.append((kernel, n, statistics.median(times), min(times), bound, placed))
    print()
    print(
        "| kernel | n | threads (aiscan) | measured: median (fastest) | aiscan lower bound "
        "| median / bound | fastest / bound | bound named | main-memory bytes | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kernel, n, median, fastest, bound, placed in rows:
        flag = " **below the bound**" if fastest < bound else ""
        threads = placed["threads"]
        assert isinstance(threads, dict)
        print(
            f"| {kernel.name} | {n} | {threads['count']} ({threads['reason']}) | {median:.4g} s "
            f"({fastest:.4g} s) | {bound:.4g} s | {median / bound:.2f} | {fastest / bound:.2f}"
            f"{flag} | {placed['bound_name']} | `{_memory_bytes(placed)}` | {kernel.note} |"
        )
    one = load_device_file(device).core
    rates = ", ".join(f"{m.name} {m.bandwidth_bytes_per_s or 0:.4g} B/s" for m in one.memory)
    peaks = ", ".join(f"{p.precision} {p.dense_flops_per_s:.4g} FLOP/s" for p in one.peaks)
    print(f"\none core, measured in this run: {rates}; GEMM {peaks}")
    for latency in one.latencies:
        print(
            f"latencies ({latency.precision}, cycles of {one.clock_hz or 0:.4g} Hz): add "
            f"{latency.add_cycles:.3g}, mul {latency.mul_cycles:.3g}, fma "
            f"{latency.fma_cycles:.3g}, divide {latency.divide_cycles or 0:.3g}"
        )
    if not arguments.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any(fastest < bound for _, _, _, fastest, bound, _ in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
