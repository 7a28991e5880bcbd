"""`aiscan devices`: the catalog as a table, and one device with every figure's source."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aiscan.roofline.devices import Device, MemoryLevel, Peak
from aiscan.roofline.units import format_bytes, format_si

__all__ = ["device_details", "device_table"]

_SHOWN_PRECISIONS = ("fp64", "fp32", "bf16", "fp16")


def device_table(devices: Sequence[Device]) -> str:
    header = [
        "device",
        "kind",
        *(f"{p} dense" for p in _SHOWN_PRECISIONS),
        "memory BW",
        "fp64 ridge",
        "aliases",
    ]
    rows = [header]
    for device in sorted(devices, key=lambda d: (d.kind, d.key)):
        peaks = []
        for precision in _SHOWN_PRECISIONS:
            peak = device.peak(precision)
            peaks.append(format_si(peak.dense_flops_per_s, "FLOP/s") if peak else "-")
        bandwidth = device.main_memory.bandwidth_bytes_per_s
        fp64 = device.peak("fp64")
        ridge = f"{fp64.dense_flops_per_s / bandwidth:.3g} F/B" if fp64 and bandwidth else "-"
        rows.append(
            [
                device.key,
                device.kind,
                *peaks,
                format_si(bandwidth, "B/s") if bandwidth else "-",
                ridge,
                ", ".join(device.aliases),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.append("")
    lines.append("`aiscan devices show NAME` prints one device with the source of every figure.")
    return "\n".join(lines) + "\n"


def device_details(device: Device) -> str:
    lines = [f"{device.name}  ({device.key}; {device.kind}; file {device.path})"]
    if device.aliases:
        lines.append(f"aliases: {', '.join(device.aliases)}")
    lines.append(f"stores write-allocate: {'yes' if device.write_allocate else 'no'}")
    if device.notes:
        lines.append(f"notes: {device.notes}")
    lines.append("")
    lines.append("peaks")
    for peak in device.peaks:
        sparse = (
            f", {format_si(peak.sparse_flops_per_s, 'FLOP/s')} with 2:4 sparsity"
            if peak.sparse_flops_per_s
            else ""
        )
        lines.append(
            f"  {peak.precision:<12} {format_si(peak.dense_flops_per_s, 'FLOP/s')} dense{sparse}"
        )
        lines.append(f"  {'':<12} source: {peak.source}")
    lines.append("memory")
    for level in device.memory:
        bandwidth = (
            format_si(level.bandwidth_bytes_per_s, "B/s")
            if level.bandwidth_bytes_per_s
            else "bandwidth not published"
        )
        lines.append(
            f"  {level.name:<12} {bandwidth}{_capacity(level, device.cores)}{_geometry(level)}"
        )
        lines.append(f"  {'':<12} source: {level.source}")
    lines += _attainable_lines(device)
    lines += _core_lines(device)
    if device.interconnects:
        lines.append("interconnect")
        for link in device.interconnects:
            lines.append(f"  {link.name:<12} {format_si(link.bandwidth_bytes_per_s, 'B/s')}")
            lines.append(f"  {'':<12} source: {link.source}")
    return "\n".join(lines) + "\n"


def _attainable_lines(device: Device) -> list[str]:
    """The measured figures `--roof attainable` places against, beside the datasheet's."""
    if not device.has_attainable:
        return []
    lines = ["attainable (measured; used with --roof attainable)"]
    return lines + _rate_lines(device.attainable_peaks, device.attainable_memory)


def _rate_lines(peaks: Iterable[Peak], memory: Iterable[MemoryLevel]) -> list[str]:
    """Each peak and bandwidth, with its source on the next line."""
    lines: list[str] = []
    for peak in peaks:
        lines.append(f"  {peak.precision:<12} {format_si(peak.dense_flops_per_s, 'FLOP/s')}")
        lines.append(f"  {'':<12} source: {peak.source}")
    for level in memory:
        rate = format_si(level.bandwidth_bytes_per_s or 0.0, "B/s")
        lines.append(f"  {level.name:<12} {rate}")
        lines.append(f"  {'':<12} source: {level.source}")
    return lines


def _core_lines(device: Device) -> list[str]:
    """Schema 3: one core's figures and the measured thread-scaling curves."""
    core = device.core
    if not (core.clock_hz or core.peaks or core.memory or core.latencies or device.curves):
        return []
    lines = ["one core"]
    if core.clock_hz:
        lines.append(f"  {'clock':<12} {core.clock_hz / 1e9:.4g} GHz")
        lines.append(f"  {'':<12} source: {core.clock_source}")
    lines += _rate_lines(core.peaks, core.memory)
    for latency in core.latencies:
        divide = f", divide {latency.divide_cycles:g}" if latency.divide_cycles else ""
        lines.append(
            f"  {latency.precision + ' latency':<12} add {latency.add_cycles:g}, mul "
            f"{latency.mul_cycles:g}, fma {latency.fma_cycles:g}{divide} cycles"
        )
        lines.append(f"  {'':<12} source: {latency.source}")
    for curve in device.curves:
        points = ", ".join(
            f"{t}: {format_si(b, 'B/s')}"
            for t, b in zip(curve.threads, curve.bandwidths_bytes_per_s, strict=True)
        )
        lines.append(f"  {curve.level} by threads: {points}")
        lines.append(f"  {'':<12} source: {curve.source}")
    return lines


def _capacity(level: MemoryLevel, cores: int) -> str:
    """The capacity as a core sees it: one instance's, where the file says how many cores
    share one (`32 KiB per core (3 MiB in all)`), else the file's total. A total beside
    "per core" read as each core's (`3.146 MB, ..., per core` for a 32 KiB L1)."""
    if not level.capacity_bytes:
        return ""
    total = format_bytes(level.capacity_bytes)
    share = level.shared_by_cores
    if not share or cores <= share or cores % share:
        return f", {total}"
    each = level.capacity_bytes / (cores // share)
    who = "per core" if share == 1 else f"per {share} cores"
    return f", {format_bytes(each)} {who} ({total} in all)"


def _geometry(level: MemoryLevel) -> str:
    """Schema-2 cache geometry: line size, ways, sharing (said with the capacity where
    `_capacity` gives one instance's)."""
    parts = []
    if level.line_bytes:
        parts.append(f"{level.line_bytes}-byte lines")
    if level.associativity:
        parts.append(f"{level.associativity}-way")
    if level.shared_by_cores == 1:
        parts.append("private")
    elif level.shared_by_cores:
        parts.append(f"one per {level.shared_by_cores} cores")
    return "".join(f", {p}" for p in parts)
