"""`aiscan calibrate`: measure this machine's attainable roofs and write a device file.

What the Empirical Roofline Toolkit and likwid-bench measure, written in the device-file
format that `--device-file` loads, so static placement can use the machine it runs on:

* on the CPU, through NumPy: copy and triad bandwidth (the bytes each NumPy call moves,
  counted as aiscan's eager view counts them, with the write-allocate the file declares),
  and a GEMM rate per precision (fp64, fp32) through NumPy's BLAS (`matmul`), each on one
  thread (the `[core]` figures a serial loop nest is placed against) and on every CPU (the
  device's figures, and the two ends of a `[scaling]` curve);
* on a GPU, the same through CuPy or PyTorch when one of them imports (neither is a
  dependency).

Each figure is the best of a few repetitions (a roof is a best case). Every source says
"measured on this machine by aiscan calibrate", with the date, the method and the sizes.
"""

from __future__ import annotations

import datetime
import functools
import importlib
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from aiscan.errors import UsageError
from aiscan.host_caches import HostCache, read_host_caches

__all__ = ["Calibration", "calibrate", "device_toml", "stream_bytes"]

_REPEATS = 5
_ONE_THREAD = {
    name: "1"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
}
"""What pins NumPy's BLAS to one thread: read when the library loads, so the one-thread GEMM
runs in a fresh interpreter."""
_STREAM_BYTES = {"copy": (16, 8), "triad": (40, 16)}
"""Bytes per element each NumPy kernel moves, and what write-allocate adds: `copyto` reads
one array and writes one; the triad is two calls (`c*3 -> t`, `b + t -> a`): reads c, b,
t and writes t, a, each write also a read for ownership under write-allocate."""


def stream_bytes(kernel: str, elements: int, write_allocate: bool) -> int:
    """The bytes `kernel` moves over `elements` float64 elements, as aiscan counts them
    under the write-allocate policy the device file declares (56 per triad element with it,
    40 without), so the bandwidth the file stores is the one the model's bytes divide by."""
    plain, allocate = _STREAM_BYTES[kernel]
    return (plain + (allocate if write_allocate else 0)) * elements


@dataclass(slots=True)
class Calibration:
    """Measured figures of one machine."""

    kind: str
    name: str
    method: str
    bandwidths: dict[str, float] = field(default_factory=dict)
    """`copy`, `triad`: bytes/s."""
    gemm: dict[str, float] = field(default_factory=dict)
    """Precision key -> FLOP/s."""
    sizes: str = ""
    caches: tuple[HostCache, ...] = ()
    """The CPU's data caches (Linux sysfs), written as levels for the cache model."""
    cpus: int = 1
    write_allocate: bool = False
    """The store policy the file declares, and the one the bandwidths are counted under."""
    core_bandwidths: dict[str, float] = field(default_factory=dict)
    """One thread's `copy`, `triad`: bytes/s (CPU only)."""
    core_gemm: dict[str, float] = field(default_factory=dict)
    """One thread's GEMM rate per precision key (CPU only)."""
    clock_hz: float | None = None
    clock_source: str = ""
    latencies: dict[str, tuple[float, float, float, float | None]] = field(default_factory=dict)
    """Precision key -> (add, mul, fma, divide) latencies in cycles, where the caller
    measured them (scripts/validate_cpu_times.py does); `calibrate` itself does not."""
    latency_source: str = ""


@dataclass(frozen=True, slots=True)
class _Backend:
    name: str
    xp: Any
    kind: str
    sync: Callable[[], None]
    describe: str


def calibrate(
    *,
    array_bytes: int,
    gemm_n: int,
    gpu: bool,
    progress: TextIO | None = None,
    repeats: int = _REPEATS,
) -> Calibration:
    """Measure bandwidth and GEMM rates; on a GPU when `gpu` and a backend imports.
    Progress goes to `progress` (standard error, as it is when called, by default); each
    figure is the best of `repeats` runs."""
    progress = progress or sys.stderr
    backend = _gpu_backend() if gpu else None
    if gpu and backend is None:
        raise UsageError("calibrate --gpu: neither CuPy nor PyTorch (with CUDA) imports")
    backend = backend or _numpy_backend()
    cpu = backend.kind == "cpu"
    result = Calibration(
        backend.kind,
        backend.describe,
        f"{backend.name}: best of {repeats}",
        sizes=f"arrays of {array_bytes} bytes, GEMM n = {gemm_n}",
        write_allocate=cpu,
    )
    if cpu:
        result.caches = read_host_caches()
        result.cpus = os.cpu_count() or 1
        result.clock_hz, result.clock_source = _host_clock()
        _say(progress, f"caches: {len(result.caches)} data caches read from Linux sysfs")
    xp = backend.xp
    n = max(array_bytes // 8, 1)
    a, b, c = (xp.ones(n, dtype=xp.float64) for _ in range(3))
    temporary = xp.empty_like(a)
    kernels = {
        "copy": lambda lo, hi: _copy(xp, a[lo:hi], b[lo:hi]),
        "triad": lambda lo, hi: _triad(xp, a[lo:hi], b[lo:hi], c[lo:hi], temporary[lo:hi]),
    }
    for name, kernel in kernels.items():
        moved = stream_bytes(name, n, result.write_allocate)
        _say(progress, f"{name}: {n} float64 elements, {moved // n} bytes each")
        seconds = _best(functools.partial(kernel, 0, n), backend.sync, repeats)
        if cpu:
            result.core_bandwidths[name] = moved / seconds  # NumPy's loops run on one thread
            if result.cpus > 1:
                _say(progress, f"{name} on {result.cpus} threads")
                seconds = _best(_split(kernel, n, result.cpus), backend.sync, repeats)
        result.bandwidths[name] = max(moved / seconds, result.core_bandwidths.get(name, 0.0))
    for key, dtype in (("fp64", xp.float64), ("fp32", xp.float32)):
        _say(progress, f"GEMM {key}: n = {gemm_n}")
        x = xp.ones((gemm_n, gemm_n), dtype=dtype)
        y = xp.ones((gemm_n, gemm_n), dtype=dtype)
        seconds = _best(functools.partial(xp.matmul, x, y), backend.sync, repeats)
        result.gemm[key] = 2 * gemm_n**3 / seconds
        if cpu:
            _say(progress, f"GEMM {key} on one thread")
            one = _one_thread_gemm(key, gemm_n, repeats)
            if one is not None:
                result.core_gemm[key] = one
                # Every thread can do what one does: a noisy all-thread run is no lower.
                result.gemm[key] = max(result.gemm[key], one)
    _say(progress, "done")
    return result


def _split(kernel: Callable[[int, int], object], n: int, threads: int) -> Callable[[], None]:
    """`kernel` over `threads` contiguous chunks at once: NumPy releases the GIL in its
    loops, so the chunks run on as many cores."""
    bounds = [(n * t // threads, n * (t + 1) // threads) for t in range(threads)]
    pool = ThreadPoolExecutor(max_workers=threads)

    def run() -> None:
        for future in [pool.submit(kernel, lo, hi) for lo, hi in bounds]:
            future.result()

    return run


_GEMM_SCRIPT = """
import sys, time
import numpy
n, dtype = int(sys.argv[1]), getattr(numpy, sys.argv[2])
x, y = numpy.ones((n, n), dtype=dtype), numpy.ones((n, n), dtype=dtype)
numpy.matmul(x, y)
best = float("inf")
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    numpy.matmul(x, y)
    best = min(best, time.perf_counter() - start)
print(2 * n**3 / max(best, 1e-9))
"""


def _one_thread_gemm(key: str, n: int, repeats: int) -> float | None:
    """The GEMM rate with BLAS pinned to one thread, in a fresh interpreter (the thread
    count is read when the library loads); None if that run fails."""
    dtype = {"fp64": "float64", "fp32": "float32"}[key]
    try:
        done = subprocess.run(
            [sys.executable, "-c", _GEMM_SCRIPT, str(n), dtype, str(repeats)],
            env={**os.environ, **_ONE_THREAD},
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        return float(done.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def _host_clock() -> tuple[float | None, str]:
    """The highest clock Linux reports: cpufreq's maximum, else /proc/cpuinfo's figure
    (the current clock, which a VM reports as its nominal one)."""
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"
    try:
        with open(cpufreq, encoding="ascii") as handle:
            return float(handle.read().strip()) * 1e3, f"read from {cpufreq}"
    except (OSError, ValueError):
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            rates = [
                float(line.split(":", 1)[1]) * 1e6
                for line in handle
                if line.lower().startswith("cpu mhz") and ":" in line
            ]
    except (OSError, ValueError):
        return None, ""
    if not rates:
        return None, ""
    return max(
        rates
    ), "read from /proc/cpuinfo (cpu MHz: the clock Linux reports, not a boost clock)"


def _say(progress: TextIO, text: str) -> None:
    print(f"aiscan calibrate: {text}", file=progress, flush=True)


def _copy(xp: ModuleType, a: Any, b: Any) -> None:
    xp.copyto(b, a) if hasattr(xp, "copyto") else b.copy_(a)


def _triad(xp: ModuleType, a: Any, b: Any, c: Any, temporary: Any) -> None:
    xp.multiply(c, 3.0, out=temporary)
    xp.add(b, temporary, out=a)


def _best(run: Callable[[], object], sync: Callable[[], None], repeats: int = _REPEATS) -> float:
    """The fastest of a warm-up plus `repeats` timed runs, in seconds."""
    run()
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        sync()
        best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def _numpy_backend() -> _Backend:
    import numpy

    cpu = platform.processor() or platform.machine() or "CPU"
    return _Backend(
        f"NumPy {numpy.__version__} (BLAS matmul)", numpy, "cpu", lambda: None, f"{cpu} (NumPy)"
    )


def _gpu_backend() -> _Backend | None:
    try:
        cupy = importlib.import_module("cupy")
        device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        sync = cupy.cuda.Device().synchronize
        return _Backend(f"CuPy {cupy.__version__}", cupy, "gpu", sync, device)
    except Exception:
        pass
    try:
        torch = importlib.import_module("torch")
        if not torch.cuda.is_available():
            return None
        return _Backend(
            f"PyTorch {torch.__version__}",
            _TorchNumpy(torch),
            "gpu",
            torch.cuda.synchronize,
            torch.cuda.get_device_name(0),
        )
    except Exception:
        return None


class _TorchNumpy:
    """The few NumPy spellings calibrate uses, on CUDA tensors."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.float64 = torch.float64
        self.float32 = torch.float32

    def ones(self, shape: Any, dtype: Any) -> Any:
        return self.torch.ones(shape, dtype=dtype, device="cuda")

    def empty_like(self, a: Any) -> Any:
        return self.torch.empty_like(a)

    def copyto(self, b: Any, a: Any) -> None:
        b.copy_(a)

    def multiply(self, x: Any, s: float, out: Any) -> None:
        self.torch.mul(x, s, out=out)

    def add(self, x: Any, y: Any, out: Any) -> None:
        self.torch.add(x, y, out=out)

    def matmul(self, x: Any, y: Any) -> Any:
        return self.torch.matmul(x, y)


def device_toml(result: Calibration, *, today: datetime.date | None = None) -> str:
    """The device file: measured rates as the peaks (there is no datasheet figure here) and
    again as `[attainable]` figures, one thread's as `[core]` figures and the bandwidth on
    one and on every thread as a `[scaling]` curve; every source names the method and the
    date, and says the figure was measured on this machine."""
    day = (today or datetime.date.today()).isoformat()
    where = f"measured on this machine by aiscan calibrate on {day}"
    memory = "HBM" if result.kind == "gpu" else "DRAM"
    core = _core_tables(result, memory, where)
    schema = 3 if core else 2 if result.caches else 1
    allocate = "true" if result.write_allocate else "false"
    threads = f"{result.cpus} threads" if result.kind == "cpu" else "the device"
    lines = [
        f"# Written by `aiscan calibrate` on {day}: {result.name}. SI units.",
        f"schema = {schema}",
        f'name = "{_quote(result.name)} (calibrated {day})"',
        'aliases = ["this-machine"]',
        f'kind = "{result.kind}"',
        *([f"cores = {result.cpus}"] if schema >= 2 else []),
        f"write_allocate = {allocate}",
        f'notes = "Attainable figures {where}; {_quote(result.method)}; {result.sizes}. '
        "The peaks are the measured GEMM rates on "
        f'{threads}; bandwidths count bytes with write_allocate = {allocate}."',
        "",
    ]
    for key, rate in result.gemm.items():
        lines += [
            f"[peaks.{key}]",
            f"dense_flops_per_s = {rate:.6g}",
            f'source = "{where}: {key} GEMM on {threads} via {_quote(result.method)} '
            f'({result.sizes})"',
            "",
        ]
    bandwidth, best, detail = _best_bandwidth(result.bandwidths)
    lines += [
        "[[memory]]",
        f'name = "{memory}"',
        f'level = "{"hbm" if result.kind == "gpu" else "dram"}"',
        f"bandwidth_bytes_per_s = {bandwidth:.6g}",
        f'source = "{where}: {best} bandwidth on {threads} ({detail}; {result.sizes})"',
        "",
    ]
    lines += _cache_levels(result, day)
    for key, rate in result.gemm.items():
        lines += [
            f"[attainable.peaks.{key}]",
            f"flops_per_s = {rate:.6g}",
            f'source = "{where}: {key} GEMM on {threads} ({result.sizes})"',
            "",
        ]
    lines += [
        f"[attainable.memory.{memory}]",
        f"bandwidth_bytes_per_s = {bandwidth:.6g}",
        f'source = "{where}: {best} bandwidth on {threads} ({detail})"',
        "",
    ]
    return "\n".join(lines + core).rstrip("\n") + "\n"


def _best_bandwidth(bandwidths: dict[str, float]) -> tuple[float, str, str]:
    best = max(bandwidths, key=lambda k: bandwidths[k])
    detail = ", ".join(f"{k} {v:.4g} B/s" for k, v in bandwidths.items())
    return bandwidths[best], best, detail


def _core_tables(result: Calibration, memory: str, where: str) -> list[str]:
    """`[core]` (one thread's GEMM and bandwidth, the clock and any latencies given) and
    `[scaling]` (the bandwidth on one thread and on every one); none on a GPU."""
    if result.kind != "cpu" or not (result.core_gemm or result.core_bandwidths):
        return []
    lines = ["[core]"]
    if result.clock_hz is not None:
        lines += [
            f"clock_hz = {result.clock_hz:.6g}",
            f'clock_source = "{_quote(result.clock_source)} on this machine"',
        ]
    lines.append("")
    for key, rate in result.core_gemm.items():
        lines += [
            f"[core.peaks.{key}]",
            f"flops_per_s = {rate:.6g}",
            f'source = "{where}: {key} GEMM on one thread (BLAS pinned to one) ({result.sizes})"',
            "",
        ]
    if result.core_bandwidths:
        one, best, detail = _best_bandwidth(result.core_bandwidths)
        lines += [
            f"[core.memory.{memory}]",
            f"bandwidth_bytes_per_s = {one:.6g}",
            f'source = "{where}: {best} bandwidth on one thread ({detail})"',
            "",
        ]
        if result.cpus > 1 and best in result.bandwidths:
            every = result.bandwidths[best]
            lines += [
                f"[scaling.memory.{memory}]",
                f"threads = [1, {result.cpus}]",
                f"bandwidth_bytes_per_s = [{one:.6g}, {every:.6g}]",
                f'source = "{where}: {best} bandwidth on one thread and on {result.cpus}"',
                "",
            ]
    if result.clock_hz is not None:
        for key, (add, mul, fma, divide) in result.latencies.items():
            lines += [
                f"[core.latency.{key}]",
                f"add_cycles = {add:.4g}",
                f"mul_cycles = {mul:.4g}",
                f"fma_cycles = {fma:.4g}",
                *([f"divide_cycles = {divide:.4g}"] if divide else []),
                f'source = "{_quote(result.latency_source)}"',
                "",
            ]
    return lines


def _cache_levels(result: Calibration, day: str) -> list[str]:
    """Schema-2 `[[memory]]` levels for the caches read from sysfs, outermost first:
    capacity as the machine's total (one instance times the instances its CPUs hold),
    as the shipped device files give it; no bandwidth (none was measured)."""
    lines = []
    for cache in reversed(result.caches):
        if cache.level > 3:
            continue
        instances = max(result.cpus // cache.cpus, 1)
        name = "L1d" if cache.level == 1 else f"L{cache.level}"
        ways = f"associativity = {cache.associativity}" if cache.associativity else ""
        lines += [
            "[[memory]]",
            f'name = "{name}"',
            f'level = "l{cache.level}"',
            f"capacity_bytes = {cache.capacity_bytes * instances}",
            f"line_bytes = {cache.line_bytes}",
            *([ways] if ways else []),
            f"shared_by_cores = {cache.cpus}",
            f'source = "read by aiscan calibrate on {day} from {cache.path} (Linux sysfs): '
            f'{cache.capacity_bytes} bytes x {instances}; bandwidth not measured"',
            "",
        ]
    return lines


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def write_device_file(path: Path, result: Calibration) -> Path:
    path.write_text(device_toml(result), encoding="utf-8")
    return path
