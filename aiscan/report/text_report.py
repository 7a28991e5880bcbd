"""The human-readable report: one block per function and loop nest, lines first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, is_infinity, is_poly
from aiscan.analysis.intensity import Intensity
from aiscan.analysis.intensity import intensity as intensity_of
from aiscan.analysis.kernel import FunctionAnalysis, LoopSummary, RegionAnalysis
from aiscan.analysis.traffic import Traffic
from aiscan.ir.nodes import GpuLaunch, InlinedFunction, Unknown, UnknownKind
from aiscan.pipeline import FileResult
from aiscan.printable import printable, printable_path
from aiscan.report.assembly import join_text
from aiscan.report.cache_range import range_lines
from aiscan.report.expressions import count_text, decimal, expression_text
from aiscan.report.placement_format import placement_lines
from aiscan.report.readable import readable
from aiscan.report.sizes import file_sizes
from aiscan.roofline.devices import Device
from aiscan.roofline.kernels import (
    PlacementOptions,
    cache_traffic_on,
    kernel_spec,
    place_on_devices,
)

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["file_text", "join_text"]

_LABEL = 12


def file_text(result: FileResult, default_model: str, placement: PlacementOptions | None) -> str:
    """One file's part of the text report; empty for a file that could not be analyzed
    (its errors go to stderr, as in every command)."""
    lines: list[str] = []
    if result.analysis is None:
        return ""
    analysis = result.analysis
    header = printable_path(result.path)
    if sizes := file_sizes(analysis):
        header += "  [" + ", ".join(f"{k}={v}" for k, v in sizes.items()) + "]"
    if analysis.write_allocate:
        header += "  (write-allocate)"
    lines.append(header)
    lines += [d.format() for d in result.diagnostics]
    if not analysis.functions:
        lines.append("  no functions with loops or arithmetic found")
    for function in analysis.functions:
        lines += _function(function, analysis.write_allocate, default_model, analysis.sizes)
        if placement is not None and placement.devices:
            lines += _placed(function, placement, analysis.sizes)
    return "\n".join(lines) + "\n"


def _placed(
    function: FunctionAnalysis, placement: PlacementOptions, sizes: Mapping[str, int]
) -> list[str]:
    """Roofline verdicts per loop nest with FLOPs, on every chosen device."""
    lines = []
    for region in function.regions:
        if region.flops.total == 0:
            continue
        label = f"{function.function.name}:{region.region.span.line}"
        spec = kernel_spec(label, region, placement)
        lines.append(f"  roofline, {region.region.span.labelled()}")
        for device, placed in zip(
            placement.devices, place_on_devices(spec, placement, sizes, region), strict=True
        ):
            first, *rest = placement_lines(placed)
            lines.append(f"    {first}")
            lines += [f"    {line}" for line in rest]
            if not isinstance(placed, str) and placed.model == "cache":
                shown = {level.level for level in placed.levels}
                lines += _cache_levels(region, device, placement, sizes, shown)
    return lines


def _cache_levels(
    region: RegionAnalysis,
    device: Device,
    placement: PlacementOptions,
    sizes: Mapping[str, int],
    placed_levels: set[str],
) -> list[str]:
    """The intensity under the cache model at the levels the placement did not already
    show (those without a bandwidth, so without a roof): each level's AI is printed once;
    then the levels whose bytes are a range between half the cache and the whole."""
    traffic = cache_traffic_on(region, device, placement, sizes)
    if traffic is None:
        return []
    ranges = range_lines(traffic, sizes)
    parts = []
    for level in traffic.levels:
        if level.level in placed_levels:
            continue
        ai = intensity_of(region.flops.total, level.total, sizes)
        shown = decimal(ai.value) or expression_text(ai.value if ai.value is not None else ai.expr)
        text = f"{shown} F/B" if shown else "no traffic"
        parts.append(f"{level.level} {text}{'' if level.exact else ' (range)'}")
    if not parts:
        return ranges
    return ["      cache traffic, AI at levels without a roof: " + ", ".join(parts), *ranges]


def _function(
    function: FunctionAnalysis,
    write_allocate: bool,
    default_model: str,
    sizes: Mapping[str, int],
) -> list[str]:
    span = function.function.span
    precision = f", {function.precision}" if function.precision else ""
    lines = ["", f"function {function.function.name} ({span.labelled()}{precision})"]
    for region in function.regions:
        lines += _region(region, write_allocate, sizes)
    if len(function.regions) > 1:
        traffic = function.traffic.get(default_model, function.traffic["compulsory"])
        intensity = function.intensity.get(default_model, function.intensity["compulsory"])
        total = traffic.total(write_allocate)
        bound = "" if traffic.exact else ", upper bound"
        flops = function.flops.total
        lines.append(
            f"  function total: FLOPs {readable(flops, sizes)}{count_text(flops, sizes)}"
            f", bytes {readable(total, sizes)}{count_text(total, sizes)} "
            f"({default_model}{bound}), AI {_intensity_text(intensity, sizes)}"
        )
    for inlined in function.function.inlined:
        lines.append(f"  inlined: {_inlined_text(inlined, span.file)}")
    for unknown in function.function.unknowns:
        if unknown.kind in (UnknownKind.ALIASING, UnknownKind.ASSUMPTION):
            lines.append(f"  assumption (line {unknown.span.line}): {printable(unknown.message)}")
        elif unknown.kind is UnknownKind.ATOMIC_CONTENTION:
            lines.append(f"  atomics (line {unknown.span.line}): {printable(unknown.message)}")
        else:
            lines.append(f"  unknown: {_unknown_text(unknown)}")
    return lines


def _inlined_text(inlined: InlinedFunction, path: str) -> str:
    """`sq (line 1), called at lines 5, 9`: a callee counted as its body."""
    where = f"line {inlined.span.line}"
    if inlined.span.file != path:
        where = f"{printable_path(inlined.span.file)}:{inlined.span.line}"
    calls = inlined.call_lines
    at = f"line{'s' if len(calls) > 1 else ''} {', '.join(str(c) for c in calls)}"
    return f"{printable(inlined.name)} ({where}), called at {at}"


def _region(region: RegionAnalysis, write_allocate: bool, sizes: Mapping[str, int]) -> list[str]:
    kind = "loop nest" if region.region.kind == "nest" else "straight-line code"
    lines = [f"  {kind}, {region.region.span.labelled()}"]
    if region.loops:
        loops = "; ".join(
            f"{loop.var} (line {loop.line}): trip {loop.trip}{_from(loop)}" for loop in region.loops
        )
        lines.append(_row("loops", loops))
    flops = region.flops
    kinds = [
        f"{k} {readable(getattr(flops, k), sizes)}"
        for k in ("add", "sub", "mul", "div", "special")
        if getattr(flops, k) != 0
    ]
    detail = f"   [{', '.join(kinds)}]" if kinds else ""
    total = readable(flops.total, sizes)
    lines.append(_row("FLOPs", f"{total}{count_text(flops.total, sizes)}{detail}"))
    launch = region.region.launch
    if launch is not None:
        lines.append(_row("launch", _launch_text(launch)))
    if region.useful_flops is not None and launch is None:
        useful = region.useful_flops.total
        lines.append(
            _row(
                "useful",
                f"{useful}{count_text(useful, sizes)}   (masked-in lanes; the FLOPs above are "
                "every lane executed, which placement uses)",
            )
        )
    if region.contraction_flops != 0 and region.region.gpu_launch:
        contraction = region.contraction_flops
        lines.append(
            _row("tensor core", f"{contraction}{count_text(contraction, sizes)}   (tl.dot)")
        )
    if region.special_calls:
        lines.append(
            _row(
                "special",
                ", ".join(region.special_calls) + " (reported apart; see --special-weight)",
            )
        )
    for name, expr in region.region.conventions:
        lines.append(_row("also quoted", _convention_text(name, expr)))
    if region.region.gpu_launch:
        streaming = region.traffic["streaming"].total(False)
        who = "program's" if launch is None else "thread's global"
        lines.append(
            _row(
                "L2 → SM",
                f"{streaming}{count_text(streaming, sizes)}   (every {who} loads and stores: "
                "the streaming model; main memory: compulsory)",
            )
        )
    if region.sector_traffic is not None:
        sectors = region.sector_traffic.total(False)
        bound = "" if region.sector_traffic.exact else ", an indirect access at its width"
        lines.append(
            _row(
                "L2 sectors",
                f"{sectors}{count_text(sectors, sizes)}   (the same in 32-byte sectors: each "
                f"warp's access costs the sectors its 32 lanes touch{bound})",
            )
        )
    if region.shared_memory_bytes is not None:
        shared = region.shared_memory_bytes
        lines.append(
            _row("shared", f"{shared}{count_text(shared, sizes)}   (__shared__ loads and stores)")
        )
    lines += _bank_conflict_rows(region, sizes)
    for index, atomic in enumerate(region.atomics):
        lines.append(
            _row(
                "atomics" if index == 0 else "",
                f"line {atomic.access.span.line}: `{atomic.access.text}` updated "
                f"{atomic.count}{count_text(atomic.count, sizes)} times (atomic read-modify-"
                "writes, in the L2)",
            )
        )
    for index, (model, traffic) in enumerate(region.traffic.items()):
        lines.append(
            _row(
                "bytes" if index == 0 else "",
                _traffic_text(model, traffic, write_allocate, sizes),
            )
        )
    for index, (model, intensity) in enumerate(region.intensity.items()):
        moved = region.traffic.get(model)
        bound = "" if moved is None or moved.exact else "  (lower bound: bytes are an upper bound)"
        text = f"{model:<10} {_intensity_text(intensity, sizes)}{bound}"
        lines.append(_row("AI" if index == 0 else "", text))
    for temporary in region.region.temporaries:
        lines.append(
            _row(
                "temporary",
                f"{temporary.name} = {temporary.expression} (line "
                f"{temporary.span.line}): {temporary.elements} "
                f"element{'' if temporary.elements == 1 else 's'}",
            )
        )
    for unknown in region.unknowns:
        lines.append(_row("unknown", _unknown_text(unknown)))
    return lines


def _bank_conflict_rows(region: RegionAnalysis, sizes: Mapping[str, int]) -> list[str]:
    """Each conflicting shared access, and the shared bytes as the banks serve them."""
    served = region.shared_wavefront_bytes
    if served is None:
        return []
    rows = [
        _row(
            "banks" if index == 0 else "",
            f"line {c.access.span.line}: `{c.access.text}` {c.ways}-way bank conflict "
            f"(a warp's {c.lanes} lanes in {c.ways} passes)",
        )
        for index, c in enumerate(region.bank_conflicts)
    ]
    rows.append(
        _row(
            "",
            f"shared as served {served}{count_text(served, sizes)}   (each conflicting access "
            "times its ways)",
        )
    )
    return rows


def _convention_text(name: str, figure: sympy.Expr) -> str:
    """A quoted figure and what it stands for. A contraction's is named by its own
    expression (the JSON's `flop_conventions` key), which says nothing said twice."""
    if name == str(figure):
        return f"{figure}   (2 FLOPs per multiply-add, the figure ML tooling quotes)"
    return f"{figure}   ({name} convention)"


def _from(loop: LoopSummary) -> str:
    """` (for n >= 5)` after a trip `n - 5`: where it, and the counts, hold."""
    if loop.nonnegative_from is None:
        return ""
    size, value = loop.nonnegative_from
    return f" (for {size} >= {value})"


def _launch_text(launch: GpuLaunch) -> str:
    def axes(values: tuple[object, ...]) -> str:
        return "(" + ", ".join(str(v) for v in values) + ")"

    return f"grid {axes(launch.grid)}, block {axes(launch.block)}   ({launch.origin})"


def _row(label: str, text: str) -> str:
    return f"    {label:<{_LABEL}}{text}"


def _traffic_text(
    model: str, traffic: Traffic, write_allocate: bool, sizes: Mapping[str, int]
) -> str:
    bound = "" if traffic.exact else "  (upper bound)"
    total = traffic.total(write_allocate)
    return (
        f"{model:<10} {readable(total, sizes)}{count_text(total, sizes)}   read "
        f"{readable(traffic.reads(write_allocate), sizes)}, write "
        f"{readable(traffic.write_bytes, sizes)}{bound}"
    )


def _intensity_text(intensity: Intensity, sizes: Mapping[str, int]) -> str:
    if not intensity.finite:
        return "no memory traffic: no finite intensity"
    text = f"{intensity.expr}"
    shown = decimal(intensity.expr)
    if intensity.expr is not None and intensity.expr.free_symbols:
        text = readable(intensity.expr, sizes)
    if shown and shown != text:
        text += f" ≈ {shown}"
    text += " F/B"
    if intensity.expr is None or not intensity.expr.free_symbols:
        return text
    notes = []
    limit = intensity.limit
    notes.append(
        "limit unknown"
        if limit is None
        else f"→ {'∞' if _unbounded(limit) else limit} as sizes grow"
    )
    if intensity.value is not None:
        value = decimal(intensity.value) or str(intensity.value)
        notes.append(f"{value} at the given sizes")
    return f"{text}   ({'; '.join(notes)})"


def _unbounded(limit: sympy.Expr) -> bool:
    return is_infinity(limit) or (not is_poly(limit) and bool(limit == sympy.oo))


def _unknown_text(unknown: Unknown) -> str:
    return f"line {unknown.span.line}: {printable(unknown.message)}"
