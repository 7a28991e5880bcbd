"""`aiscan calibrate`: measure this machine's attainable roofs and write a device file.

What the Empirical Roofline Toolkit and likwid-bench measure, written in the device-file
format that `--device-file` loads, so static placement can use the machine it runs on:

* on the CPU, through NumPy: copy and triad bandwidth (the bytes each NumPy call moves,
  counted as aiscan's eager view counts them), and a GEMM rate per precision (fp64, fp32)
  through NumPy's BLAS (`matmul`);
* on a GPU, the same through CuPy or PyTorch when one of them imports (neither is a
  dependency).

Each figure is the best of a few repetitions (a roof is a best case). Every source says
"measured by aiscan calibrate", with the date, the method and the sizes.
"""

from __future__ import annotations

import datetime
import functools
import importlib
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from aiscan.errors import UsageError
from aiscan.host_caches import HostCache, read_host_caches

__all__ = ["Calibration", "calibrate", "device_toml"]

_REPEATS = 5


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
    """The CPU's data caches (Linux sysfs), written as schema-2 levels for the cache model."""
    cpus: int = 1


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
) -> Calibration:
    """Measure bandwidth and GEMM rates; on a GPU when `gpu` and a backend imports.
    Progress goes to `progress` (standard error, as it is when called, by default)."""
    progress = progress or sys.stderr
    backend = _gpu_backend() if gpu else None
    if gpu and backend is None:
        raise UsageError("calibrate --gpu: neither CuPy nor PyTorch (with CUDA) imports")
    backend = backend or _numpy_backend()
    result = Calibration(
        backend.kind,
        backend.describe,
        f"{backend.name}: best of {_REPEATS}",
        sizes=f"arrays of {array_bytes} bytes, GEMM n = {gemm_n}",
    )
    if backend.kind == "cpu":
        result.caches = read_host_caches()
        result.cpus = os.cpu_count() or 1
        _say(progress, f"caches: {len(result.caches)} data caches read from Linux sysfs")
    xp = backend.xp
    n = max(array_bytes // 8, 1)
    a, b, c = (xp.ones(n, dtype=xp.float64) for _ in range(3))
    _say(progress, f"copy: {n} float64 elements")
    seconds = _best(lambda: _copy(xp, a, b), backend.sync)
    result.bandwidths["copy"] = 16 * n / seconds
    _say(progress, f"triad: {n} float64 elements (two NumPy calls, 5 arrays of traffic)")
    temporary = xp.empty_like(a)
    seconds = _best(lambda: _triad(xp, a, b, c, temporary), backend.sync)
    result.bandwidths["triad"] = 40 * n / seconds
    for key, dtype in (("fp64", xp.float64), ("fp32", xp.float32)):
        _say(progress, f"GEMM {key}: n = {gemm_n}")
        x = xp.ones((gemm_n, gemm_n), dtype=dtype)
        y = xp.ones((gemm_n, gemm_n), dtype=dtype)
        seconds = _best(functools.partial(xp.matmul, x, y), backend.sync)
        result.gemm[key] = 2 * gemm_n**3 / seconds
    _say(progress, "done")
    return result


def _say(progress: TextIO, text: str) -> None:
    print(f"aiscan calibrate: {text}", file=progress, flush=True)


def _copy(xp: ModuleType, a: Any, b: Any) -> None:
    xp.copyto(b, a) if hasattr(xp, "copyto") else b.copy_(a)


def _triad(xp: ModuleType, a: Any, b: Any, c: Any, temporary: Any) -> None:
    xp.multiply(c, 3.0, out=temporary)
    xp.add(b, temporary, out=a)


def _best(run: Callable[[], object], sync: Callable[[], None]) -> float:
    """The fastest of a warm-up plus `_REPEATS` timed runs, in seconds."""
    run()
    sync()
    best = float("inf")
    for _ in range(_REPEATS):
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
    again as `[attainable]` figures, every source naming the method and the date."""
    day = (today or datetime.date.today()).isoformat()
    where = f"measured by aiscan calibrate on {day}"
    memory = "HBM" if result.kind == "gpu" else "DRAM"
    lines = [
        f"# Written by `aiscan calibrate` on {day}: {result.name}. SI units.",
        f"schema = {2 if result.caches else 1}",
        f'name = "{_quote(result.name)} (calibrated {day})"',
        'aliases = ["this-machine"]',
        f'kind = "{result.kind}"',
        *([f"cores = {result.cpus}"] if result.caches else []),
        f"write_allocate = {'false' if result.kind == 'gpu' else 'true'}",
        f'notes = "Attainable figures {where}; {_quote(result.method)}; {result.sizes}. '
        'The peaks are the measured GEMM rates, not datasheet figures."',
        "",
    ]
    for key, rate in result.gemm.items():
        lines += [
            f"[peaks.{key}]",
            f"dense_flops_per_s = {rate:.6g}",
            f'source = "{where}: {key} GEMM via {_quote(result.method)} ({result.sizes})"',
            "",
        ]
    bandwidth = max(result.bandwidths.values())
    best = max(result.bandwidths, key=lambda k: result.bandwidths[k])
    detail = ", ".join(f"{k} {v:.4g} B/s" for k, v in result.bandwidths.items())
    lines += [
        "[[memory]]",
        f'name = "{memory}"',
        f'level = "{"hbm" if result.kind == "gpu" else "dram"}"',
        f"bandwidth_bytes_per_s = {bandwidth:.6g}",
        f'source = "{where}: {best} bandwidth ({detail}; {result.sizes})"',
        "",
    ]
    lines += _cache_levels(result, day)
    for key, rate in result.gemm.items():
        lines += [
            f"[attainable.peaks.{key}]",
            f"flops_per_s = {rate:.6g}",
            f'source = "{where}: {key} GEMM ({result.sizes})"',
            "",
        ]
    lines += [
        f"[attainable.memory.{memory}]",
        f"bandwidth_bytes_per_s = {bandwidth:.6g}",
        f'source = "{where}: {best} bandwidth ({detail})"',
        "",
    ]
    return "\n".join(lines)


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
