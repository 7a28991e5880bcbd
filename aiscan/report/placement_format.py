"""Roofline placements as report text and JSON objects (both reports share this)."""

from __future__ import annotations

from typing import Any

from aiscan.report.expressions import expression_text
from aiscan.report.readable import readable
from aiscan.roofline.in_core import InCoreCeiling, Limiter
from aiscan.roofline.placement import (
    Bound,
    CrossoverKind,
    LevelPlacement,
    Placement,
    Times,
    held_text,
)
from aiscan.roofline.units import format_si, format_time

__all__ = ["placement_json", "placement_lines"]


def placement_json(placement: Placement | str, write_allocate: bool | None) -> dict[str, Any]:
    if isinstance(placement, str):
        device, _, reason = placement.partition(": ")
        return {"device": device, "error": reason}
    crossover = placement.crossover
    times = placement.times
    return {
        "device": placement.device,
        "device_name": placement.device_name,
        "precision": placement.precision,
        "precision_requested": placement.precision_requested,
        "roof": placement.roof,
        "traffic_view": placement.traffic_view or None,
        "sparse": placement.sparse,
        "write_allocate": write_allocate,
        "memory_level": placement.memory_level,
        "peak_flops_per_s": placement.peak_flops_per_s,
        "peak_source": placement.peak_source,
        "bandwidth_bytes_per_s": placement.bandwidth_bytes_per_s,
        "ridge_flops_per_byte": placement.ridge_flops_per_byte,
        "bytes": expression_text(placement.bytes_moved),
        "intensity_flops_per_byte": placement.intensity_flops_per_byte,
        "bound": placement.bound.value,
        "bound_name": _bound_name(placement),
        "threads": None
        if placement.threads is None
        else {"count": placement.threads, "reason": placement.threads_reason},
        "attainable_flops_per_s": placement.attainable_flops_per_s,
        "fraction_of_peak": placement.fraction_of_peak,
        "times": None
        if times is None
        else {
            "math_s": times.math_s,
            "comms_s": times.comms_s,
            "lower_bound_s": times.lower_bound_s,
            "upper_bound_s": times.upper_bound_s,
        },
        "crossover": {
            "kind": crossover.kind.value,
            "size_names": list(crossover.size_names),
            "size_exact": expression_text(crossover.size_exact),
            "size": crossover.size,
            "first_integer_size": crossover.first_integer_size,
            "compute_bound_above": crossover.compute_bound_above,
        },
        "notes": list(placement.notes),
        "in_core": _in_core_json(placement.in_core),
        "model": placement.model,
        "bound_level": placement.bound_level,
        "levels": [
            {
                "level": level.level,
                "kind": level.kind,
                "bandwidth_bytes_per_s": level.bandwidth_bytes_per_s,
                "bytes": expression_text(level.bytes_moved),
                "intensity_flops_per_byte": level.intensity_flops_per_byte,
                "attainable_flops_per_s": level.attainable_flops_per_s,
                "attainable_limit_flops_per_s": level.attainable_limit_flops_per_s,
            }
            for level in placement.levels
        ],
        **(
            {"times_by_roof": {k: _times(v) for k, v in placement.times_by_roof}}
            if placement.times_by_roof
            else {}
        ),
    }


def _times(times: Times | None) -> dict[str, float] | None:
    if times is None:
        return None
    return {
        "math_s": times.math_s,
        "comms_s": times.comms_s,
        "lower_bound_s": times.lower_bound_s,
        "upper_bound_s": times.upper_bound_s,
    }


def _in_core_json(ceiling: InCoreCeiling | None) -> dict[str, Any] | None:
    if ceiling is None:
        return None
    return {
        "flops_per_s": ceiling.flops_per_s,
        "fraction_of_peak": ceiling.fraction_of_peak,
        "limiter": ceiling.limiter.value,
        "divide_ops_per_s": ceiling.divide_ops_per_s,
        "special_ops_per_s": ceiling.special_ops_per_s,
        "notes": list(ceiling.notes),
        "chain": None
        if ceiling.chain is None
        else {
            "line": ceiling.chain.line,
            "flops_per_s": ceiling.chain.flops_per_s,
            "seconds": ceiling.chain.seconds,
            "cycles_per_iteration": ceiling.chain.cycles_per_iteration,
            "text": ceiling.chain.text,
        },
    }


def _bound_name(p: Placement) -> str:
    """What bounds the kernel, in the verdict's words: `DRAM`, `L2`, `compute`,
    `in-core (dependency chain, line 4)`, `memory or compute (depends on size)`."""
    if p.bound is Bound.DEPENDS_ON_SIZE:
        return "memory or compute (depends on size)"
    if p.bound_level is not None:
        return p.bound_level
    if (
        p.bound is Bound.COMPUTE
        and p.in_core is not None
        and p.in_core.limiter
        not in (
            Limiter.FMA,
            Limiter.UNKNOWN,
        )
    ):
        return p.in_core.bound_name
    return p.bound.value


def _in_core_text(ceiling: InCoreCeiling | None) -> list[str]:
    """A line when the kernel's mix keeps it below the peak, or leaves operations out."""
    if ceiling is None:
        return []
    lines = []
    if ceiling.flops_per_s is not None and ceiling.limiter is not Limiter.FMA:
        share = 100 * (ceiling.fraction_of_peak or 0.0)
        lines.append(
            f"  in-core ceiling {format_si(ceiling.flops_per_s, 'FLOP/s')} ({share:.3g}% of "
            f"peak): {ceiling.limiter.value}"
        )
    if ceiling.chain is not None:
        lines.append(f"  dependency chain, {ceiling.chain.text}")
    lines += [f"  note: in-core ceiling: {note}" for note in ceiling.notes]
    return lines


def placement_lines(placement: Placement | str) -> list[str]:
    """One or two lines: verdict and attainable rate, then times and the crossover."""
    if isinstance(placement, str):
        return [f"cannot place on {placement}"]
    p = placement
    threads = ""
    if p.threads is not None:
        threads = f", {p.threads} thread{'s' if p.threads != 1 else ''} ({p.threads_reason})"
    head = (
        f"{p.device} {p.precision}{' sparse' if p.sparse else ''}{threads}: ridge "
        f"{p.ridge_flops_per_byte:.4g} F/B, "
    )
    if p.bound is Bound.DEPENDS_ON_SIZE:
        head += "memory- or compute-bound depending on size"
    elif p.bound_level is not None:
        head += _level_verdict(p)
    elif p.latency_bound and p.in_core is not None:
        head += f"bound {p.in_core.bound_name}"
    else:
        head += f"{p.bound.value}-bound"
    if p.attainable_flops_per_s is not None:
        share = f" ({100 * p.fraction_of_peak:.3g}% of peak)" if p.fraction_of_peak else ""
        head += f", attainable {format_si(p.attainable_flops_per_s, 'FLOP/s')}{share}"
    lines = [head]
    details = [f"roof {p.roof}"] if p.roof else []
    if p.traffic_view:
        details.append(f"{p.traffic_view} bytes {readable(p.bytes_moved)}")
    if p.times is not None:
        t = p.times
        details.append(
            f"T_math {format_time(t.math_s)}, T_comms {format_time(t.comms_s)}, "
            f"time {format_time(t.lower_bound_s)} to {format_time(t.upper_bound_s)} "
            "(lower and upper bounds on an ideal machine, not a prediction)"
        )
    crossover = _crossover_text(p)
    if p.model == "cache" and crossover:
        crossover += " (with these layer conditions)"
    details.append(crossover)
    lines.append("  " + "; ".join(d for d in details if d))
    if p.times_by_roof:
        shown = [f"{name} {format_time(t.lower_bound_s)}" for name, t in p.times_by_roof if t]
        if shown:
            lines.append("  lower bound by roof: " + ", ".join(shown))
    lines += _in_core_text(p.in_core)
    if p.latency_bound:
        lines.append(
            "  note: the loop waits on a chain of dependent operations: the bandwidth "
            "roofline is optimistic here, and the chain's latency is the bound"
        )
    if p.levels:
        lines.append(
            "  cache model, AI per level: " + ", ".join(_level_text(lv) for lv in p.levels)
        )
    lines += [f"  note: {note}" for note in p.notes]
    return lines


def _level_verdict(p: Placement) -> str:
    """`memory-bound at DRAM` for main memory, `L2-bound` for a cache."""
    level = next((lv for lv in p.levels if lv.level == p.bound_level), None)
    if level is not None and level.kind in ("dram", "hbm"):
        kind = level.kind.upper()
        # `DDR5-4800 (12 channels)` reads `(DDR5-4800, 12 channels)`, not nested brackets.
        name = level.level.replace(" (", ", ").replace(")", "")
        named = "" if level.level.upper() == kind else f" ({name})"
        return f"memory-bound at {kind}{named}"
    return f"{p.bound_level}-bound"


def _level_text(level: LevelPlacement) -> str:
    if level.intensity_flops_per_byte is not None:
        ai = f"{level.intensity_flops_per_byte:.4g} F/B"
    elif level.intensity is not None:
        ai = f"{readable(level.intensity)} F/B"
    else:
        ai = "no traffic"
    rate = level.attainable_flops_per_s
    roof = f" (roof {format_si(rate, 'FLOP/s')})" if rate is not None else ""
    return f"{level.level} {ai}{roof}"


def _crossover_text(p: Placement) -> str:
    crossover = p.crossover
    names = "=".join(crossover.size_names) or "size"
    held = held_text(crossover.held)
    if crossover.kind is CrossoverKind.AT and crossover.size is not None:
        side = "compute" if crossover.compute_bound_above else "memory"
        return f"{side}-bound above {names} ≈ {crossover.size:.6g}{held}"
    if crossover.kind is CrossoverKind.NEVER:
        return f"memory-bound at every size{held}"
    if crossover.kind is CrossoverKind.ALWAYS:
        return f"compute-bound at every size{held}"
    if crossover.held and crossover.size_names:
        return f"crossover in {names} depends on {', '.join(crossover.held)} (held, not swept)"
    return f"crossover size unknown{held}"
