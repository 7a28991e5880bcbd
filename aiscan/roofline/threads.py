"""How many threads run a loop nest, and a CPU's roofs for that many.

A loop nest runs on one core unless the code says otherwise (an OpenMP directive on it, a
parallel region around it, a library contraction that BLAS spreads over the cores) or the
user does (`--threads N`, the `threads` setting). One core has its own peak (SIMD width x
FMA units x clock) and reaches only part of the socket's bandwidth from each shared level;
N cores reach N times one core's rate until the shared level saturates, which a measured
curve (`[scaling]`) shows and the socket figure caps. Caches are shared as the hardware
shares them: one thread has its private caches and a whole shared cache to itself.
GPUs are placed as they are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from aiscan.ir.nodes import Branch, Loop, Node, Parallel, Region
from aiscan.roofline.devices import Device, MemoryLevel, Peak

__all__ = ["ThreadChoice", "ThreadRequest", "on_threads", "thread_request", "threads_of"]

SERIAL = "no OpenMP pragma on the nest"
NUMPY_SERIAL = "NumPy element-wise calls run on one thread"
CONTRACTION = "a library contraction: BLAS runs it on the cores"


@dataclass(frozen=True, slots=True)
class ThreadRequest:
    """What the code (or the user) asks for: `count` threads, None for every core."""

    count: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class ThreadChoice:
    """The threads a placement assumed on one device, and why."""

    count: int
    reason: str


def thread_request(
    regions: Sequence[Region], override: int | None = None, override_reason: str = ""
) -> ThreadRequest:
    """The threads of a loop nest (or of a function's nests: the most any of them uses,
    which keeps the time a lower bound)."""
    if override is not None:
        return ThreadRequest(override, override_reason or f"--threads {override}")
    requests = [_region_request(r) for r in regions]
    if not requests:
        return ThreadRequest(1, SERIAL)
    if len(requests) == 1:
        return requests[0]
    widest = max(requests, key=lambda r: float("inf") if r.count is None else r.count)
    if all(r == widest for r in requests):
        return widest
    return ThreadRequest(widest.count, f"the widest of its nests: {widest.reason}")


def _region_request(region: Region) -> ThreadRequest:
    found = next(_parallel_loops(region.body), None)
    if found is not None:
        where = f"{found.text}, line {found.span.line}"
        if found.threads_line is not None:
            where += f"; omp_set_num_threads, line {found.threads_line}"
        return ThreadRequest(found.threads, where)
    if region.eager_calls:
        if any(call.contraction for call in region.eager_calls):
            return ThreadRequest(None, CONTRACTION)
        return ThreadRequest(1, NUMPY_SERIAL)
    return ThreadRequest(1, SERIAL)


def _parallel_loops(body: Sequence[Node]) -> Iterator[Parallel]:
    """The parallel constructs of a body, outermost first."""
    for node in body:
        if isinstance(node, Loop):
            if node.parallel is not None:
                yield node.parallel
            else:
                yield from _parallel_loops(node.body)
        elif isinstance(node, Branch):
            yield from _parallel_loops(node.then_body)
            yield from _parallel_loops(node.else_body)


def threads_of(device: Device, request: ThreadRequest) -> ThreadChoice | None:
    """The thread count on `device`: every core, or the request capped at the cores (more
    threads than cores add no roof). None on a GPU."""
    if device.kind != "cpu":
        return None
    if request.count is None:
        return ThreadChoice(device.cores, f"{request.reason}; every core")
    if request.count > device.cores:
        return ThreadChoice(device.cores, f"{request.reason}; capped at {device.cores} cores")
    return ThreadChoice(request.count, request.reason)


def on_threads(device: Device, request: ThreadRequest) -> tuple[Device, ThreadChoice | None]:
    """The device with its roofs for the request's threads (unchanged on a GPU)."""
    choice = threads_of(device, request)
    if choice is None:
        return device, None
    return scaled_to_threads(device, choice.count), choice


@lru_cache(maxsize=256)
def scaled_to_threads(device: Device, threads: int) -> Device:
    """`device` with the peaks and bandwidths `threads` of its cores reach."""
    if device.threads == threads or threads >= device.cores:
        return replace(device, threads=threads)  # every core: the device's own figures
    return replace(
        device,
        peaks=tuple(_peak(device, p, threads) for p in device.peaks),
        memory=tuple(_level(device, m, threads) for m in device.memory),
        threads=threads,
    )


def _cores_text(device: Device, threads: int) -> str:
    return "one core" if threads == 1 else f"{threads} of {device.cores} cores"


def _peak(device: Device, peak: Peak, threads: int) -> Peak:
    """min(threads x one core's peak, the device's): the core's figure where the file gives
    one, else the device's over its cores (exact for a peak: cores add up)."""
    core = device.core.peak(peak.precision)
    if core is not None:
        one, source = core.dense_flops_per_s, core.source
    else:
        one = peak.dense_flops_per_s / device.cores
        source = f"derived: the device's peak over its {device.cores} cores ({peak.source})"
    rate = min(threads * one, peak.dense_flops_per_s)
    share = min(threads / device.cores, 1.0)
    sparse = None if peak.sparse_flops_per_s is None else peak.sparse_flops_per_s * share
    if threads == 1:
        text = f"one core: {source}"
    else:
        text = (
            f"{_cores_text(device, threads)}: min({threads} x one core's "
            f"{one:.4g} FLOP/s, the device's {peak.dense_flops_per_s:.4g}); one core: {source}"
        )
    divide = None if peak.divide_ops_per_s is None else peak.divide_ops_per_s * share
    special = None if peak.special_ops_per_s is None else peak.special_ops_per_s * share
    return replace(
        peak,
        dense_flops_per_s=rate,
        sparse_flops_per_s=sparse,
        source=text,
        divide_ops_per_s=divide,
        special_ops_per_s=special,
    )


def _level(device: Device, level: MemoryLevel, threads: int) -> MemoryLevel:
    """A level's bandwidth for `threads` of fewer than all cores: the measured curve, else
    min(threads x one core's figure, the device's), else a private level's share, else the
    device's figure (an upper bound, said so in the source). With every core busy the
    device's figure stands (`scaled_to_threads`)."""
    cores = _cores_text(device, threads)
    curve = device.curve(level.name)
    core = device.core.bandwidth(level.name)
    total = level.bandwidth_bytes_per_s
    if curve is not None:
        rate = curve.at(threads)
        source = f"{cores}, read off the measured curve: {curve.source}"
    elif core is not None and core.bandwidth_bytes_per_s is not None:
        one = core.bandwidth_bytes_per_s
        rate = threads * one if total is None else min(threads * one, total)
        source = f"one core: {core.source}"
        if threads > 1:
            cap = "" if total is None else f", the device's {total:.4g}"
            source = f"{cores}: min({threads} x one core's {one:.4g} B/s{cap}); {source}"
    elif total is None:
        return level
    elif level.shared_by_cores == 1:
        rate = total * threads / device.cores
        source = (
            f"{cores}: a private level, the device's figure x {threads}/{device.cores} "
            f"({level.source})"
        )
    else:
        rate = total
        source = (
            f"{cores}: no one-core figure in the device file, the device's (an upper bound) "
            f"({level.source})"
        )
    return replace(level, bandwidth_bytes_per_s=rate, source=source)
