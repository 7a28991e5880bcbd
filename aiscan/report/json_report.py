"""The versioned JSON report that editors, CI and scripts read.

The schema ships in the package (`aiscan/report/schema/report.schema.json`); any change
to the shape bumps `SCHEMA_VERSION` and is recorded in CHANGELOG.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY
from aiscan.analysis.cache_model import LayerCondition, LevelTraffic
from aiscan.analysis.flops import FlopCounts
from aiscan.analysis.gpu_memory import AtomicUpdates
from aiscan.analysis.intensity import Intensity, intensity, substitute_sizes
from aiscan.analysis.kernel import FunctionAnalysis, RegionAnalysis
from aiscan.analysis.traffic import Traffic
from aiscan.errors import Diagnostic
from aiscan.ir.nodes import InlinedFunction, Parameter, Unknown
from aiscan.pipeline import FileResult
from aiscan.report.assembly import SCHEMA_VERSION, join_report, load_schema
from aiscan.report.cache_range import range_json
from aiscan.report.expressions import expression_text, json_count, numeric_value
from aiscan.report.placement_format import placement_json
from aiscan.report.sizes import file_sizes
from aiscan.roofline.devices import Device
from aiscan.roofline.hierarchy import DeviceCacheTraffic
from aiscan.roofline.kernels import (
    PlacementOptions,
    cache_traffic_on,
    kernel_spec,
    place_on_devices,
)
from aiscan.roofline.placement import Bound, Placement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["SCHEMA_VERSION", "file_entry", "join_report", "load_schema"]


def file_entry(result: FileResult, placement: PlacementOptions | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": result.path,
        "status": "analyzed" if result.analysis is not None else "error",
        "diagnostics": [_diagnostic(d) for d in result.diagnostics],
    }
    if result.analysis is None:
        return entry
    analysis = result.analysis
    entry["language"] = analysis.module.language
    entry["sizes"] = file_sizes(analysis)
    entry["functions"] = [
        _function(f, analysis.write_allocate, placement, analysis.sizes) for f in analysis.functions
    ]
    return entry


def _placements(
    label: str,
    result: RegionAnalysis | FunctionAnalysis,
    placement: PlacementOptions | None,
    sizes: Mapping[str, int],
) -> dict[str, Any]:
    if placement is None or not placement.devices:
        return {}
    spec = kernel_spec(label, result, placement)
    placed = place_on_devices(spec, placement, sizes, result)
    cache = []
    for p, device in zip(placed, placement.devices, strict=True):
        traffic = cache_traffic_on(result, device, placement, sizes)
        if traffic is not None:
            cache.append(_cache_traffic(traffic, result.flops.total, sizes, p))
    return {
        "placement": [
            placement_json(p, _uses_write_allocate(d, placement))
            for p, d in zip(placed, placement.devices, strict=True)
        ],
        "cache_traffic": cache,
    }


def _cache_traffic(
    traffic: DeviceCacheTraffic,
    flops: sympy.Expr,
    sizes: Mapping[str, int],
    placed: Placement | str,
) -> dict[str, Any]:
    """The `cache` model's traffic on one device: bytes each level serves, from the core
    outwards (the last is main memory), and the level that bounds the kernel."""
    bound: str | None = None
    if not isinstance(placed, str):
        if placed.model != "cache":
            bound = None
        elif placed.bound is Bound.COMPUTE:
            bound = "compute"
        else:
            bound = placed.bound_level
    return {
        "device": traffic.device,
        "levels": [_cache_level(level, flops, sizes) for level in traffic.levels],
        "bound": bound,
        "notes": list(traffic.notes),
    }


def _cache_level(
    level: LevelTraffic, flops: sympy.Expr, sizes: Mapping[str, int]
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "level": level.level,
        "read": expression_text(level.read),
        "write": expression_text(level.write),
    }
    for key, expr in (("read_value", level.read), ("write_value", level.write)):
        value = _value_at(expr, sizes)
        if value is not None:
            entry[key] = value
    entry["intensity"] = _intensity(intensity(flops, level.total, sizes))
    entry["exact"] = level.exact
    if level.read_lower is not None:
        entry["read_lower"] = expression_text(level.read_lower)
        entry["write_lower"] = expression_text(level.write_lower)
    entry["layer_conditions"] = [_layer_condition(c) for c in level.conditions]
    entry["undecided"] = [{"reason": u.reason, "line": u.line} for u in level.undecided]
    entry.update(range_json(level, sizes))
    return entry


def _layer_condition(condition: LayerCondition) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "cache": condition.cache,
        "loop": condition.loop_var,
        "line": condition.line,
        "working_set": expression_text(condition.working_set),
        "capacity_bytes": condition.capacity_bytes,
        "holds": condition.holds,
        "breaks_at": condition.breaks_at,
        "decided_at_sizes": condition.by_size,
    }
    if condition.iterations is not None:  # decided for a piece of the loop's range
        first, last = condition.iterations
        entry["iterations"] = {"first": expression_text(first), "last": expression_text(last)}
    return entry


def _value_at(expr: sympy.Expr, sizes: Mapping[str, int]) -> float | None:
    """The number at the given sizes; None without sizes or with symbols left over."""
    if not sizes:
        return None
    return numeric_value(substitute_sizes(expr, sizes)) if expr.free_symbols else float(expr)


def _uses_write_allocate(device: Device, placement: PlacementOptions) -> bool:
    return device.write_allocate if placement.write_allocate is None else placement.write_allocate


def _function(
    function: FunctionAnalysis,
    write_allocate: bool,
    placement: PlacementOptions | None,
    sizes: Mapping[str, int],
) -> dict[str, Any]:
    span = function.function.span
    name = function.function.name
    return {
        "name": function.function.name,
        "line": span.line,
        "end_line": span.end_line,
        "precision": function.precision or None,
        "flops": _flops(function.flops, sizes),
        "bytes": _bytes(function.traffic, write_allocate, sizes),
        "intensity": _intensities(function.intensity),
        "unknowns": [_unknown(u) for u in function.unknowns],
        "nests": [_region(r, write_allocate, placement, sizes, name) for r in function.regions],
        **_placements(name, function, placement, sizes),
        **_parameters(function.function.parameters),
        **_inlined(function.function.inlined),
    }


def _inlined(inlined: tuple[InlinedFunction, ...]) -> dict[str, Any]:
    """Schema 1.7: the callees counted inline, where there are any."""
    if not inlined:
        return {}
    return {
        "inlined": [
            {
                "name": f.name,
                "file": f.span.file,
                "line": max(f.span.line, 1),
                "call_lines": [max(line, 1) for line in f.call_lines],
            }
            for f in inlined
        ]
    }


def _parameters(parameters: tuple[Parameter, ...] | None) -> dict[str, Any]:
    """Schema 1.5: the parameters as the frontend took them (Python functions)."""
    if parameters is None:
        return {}
    return {
        "parameters": [
            {
                "name": p.name,
                "line": p.span.line,
                "column": p.span.column,
                "kind": p.kind,
                "shape": [expression_text(e) for e in p.shape],
                "dtype": p.element.name if p.element is not None else None,
                "shape_from": p.shape_from,
                "dtype_from": p.dtype_from,
                "note": p.note,
            }
            for p in parameters
        ]
    }


def _region(
    region: RegionAnalysis,
    write_allocate: bool,
    placement: PlacementOptions | None,
    sizes: Mapping[str, int],
    function_name: str,
) -> dict[str, Any]:
    span = region.region.span
    return {
        "kind": region.region.kind,
        "line": span.line,
        "end_line": span.end_line,
        "precision": region.precision or None,
        "loops": [
            {
                "var": loop.var,
                "line": loop.line,
                "depth": loop.depth,
                "start": expression_text(loop.start),
                "step": loop.step,
                "trip": expression_text(loop.trip),
            }
            for loop in region.loops
        ],
        "flops": _flops(region.flops, sizes),
        "flop_conventions": {
            name: expression_text(expr) for name, expr in region.region.conventions
        },
        "special_calls": list(region.special_calls),
        "bytes": _bytes(region.traffic, write_allocate, sizes),
        "intensity": _intensities(region.intensity),
        "temporaries": [
            {
                "name": t.name,
                "expression": t.expression,
                "line": t.span.line,
                "elements": expression_text(t.elements),
                "bytes": expression_text(t.elements * t.element.width_bytes),
            }
            for t in region.region.temporaries
        ],
        "unknowns": [_unknown(u) for u in region.unknowns],
        **_gpu_launch(region, sizes),
        **_placements(f"{function_name}:{span.line}", region, placement, sizes),
    }


def _gpu_launch(region: RegionAnalysis, sizes: Mapping[str, int]) -> dict[str, Any]:
    """Schema 1.3: a GPU launch's useful FLOPs, tensor-core FLOPs and L2 → SM bytes;
    1.4: a CUDA launch's configuration and shared-memory bytes; and the L2 → SM bytes in
    sectors (an optional field, added with the GPU memory model)."""
    if region.useful_flops is None:
        return {}
    useful = region.useful_flops.total
    streaming = region.traffic["streaming"].total(False)
    entry: dict[str, Any] = {
        "useful_flops": expression_text(useful),
        "tensor_core_flops": expression_text(region.contraction_flops),
        "l2_to_sm_bytes": expression_text(streaming),
        "placement_flops": "executed",
    }
    if sizes:
        entry["useful_flops_value"] = json_count(useful, sizes)
        entry["l2_to_sm_bytes_value"] = json_count(streaming, sizes)
    sectors = region.sector_traffic
    if sectors is not None:  # the GPU memory model's sectors
        entry["l2_sector_bytes"] = expression_text(sectors.total(False))
        entry["l2_sector_bytes_exact"] = sectors.exact
        if sizes:
            entry["l2_sector_bytes_value"] = json_count(sectors.total(False), sizes)
    launch = region.region.launch
    if launch is not None:  # schema 1.4: CUDA launches
        entry["launch"] = {
            "kernel": launch.kernel,
            "grid": [expression_text(v) for v in launch.grid],
            "block": [expression_text(v) for v in launch.block],
            "origin": launch.origin,
        }
    shared = region.shared_memory_bytes
    if shared is not None:
        entry["shared_memory_bytes"] = expression_text(shared)
        if sizes:
            entry["shared_memory_bytes_value"] = json_count(shared, sizes)
    served = region.shared_wavefront_bytes
    if served is not None:  # schema 1.6: shared-memory bank conflicts
        entry["bank_conflicts"] = [
            {
                "line": c.access.span.line,
                "column": c.access.span.column,
                "reference": c.access.text,
                "ways": c.ways,
                "lanes": c.lanes,
            }
            for c in region.bank_conflicts
        ]
        entry["shared_served_bytes"] = expression_text(served)
        if sizes:
            entry["shared_served_bytes_value"] = json_count(served, sizes)
    if region.atomics:  # schema 1.6: atomic updates counted
        entry["atomics"] = [_atomic(a, sizes) for a in region.atomics]
    return {"gpu_launch": entry}


def _atomic(atomic: AtomicUpdates, sizes: Mapping[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "line": atomic.access.span.line,
        "reference": atomic.access.text,
        "count": expression_text(atomic.count),
    }
    if sizes:
        entry["count_value"] = json_count(atomic.count, sizes)
    return entry


def _flops(flops: FlopCounts, sizes: Mapping[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        kind: expression_text(getattr(flops, kind))
        for kind in ("total", "add", "sub", "mul", "div", "special")
    }
    if sizes:  # schema 1.2: the count at the file's sizes (null where symbols remain)
        entry["total_value"] = json_count(flops.total, sizes)
    return entry


def _bytes(
    traffic: Mapping[str, Traffic], write_allocate: bool, sizes: Mapping[str, int]
) -> dict[str, Any]:
    return {model: _traffic(t, write_allocate, sizes) for model, t in traffic.items()}


def _traffic(t: Traffic, write_allocate: bool, sizes: Mapping[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "read": expression_text(t.reads(write_allocate)),
        "write": expression_text(t.write_bytes),
        "total": expression_text(t.total(write_allocate)),
        "write_allocate_read": expression_text(t.allocate_bytes),
        "exact": t.exact,
    }
    if sizes:  # schema 1.2: the bytes at the file's sizes (null where symbols remain)
        entry["read_value"] = json_count(t.reads(write_allocate), sizes)
        entry["write_value"] = json_count(t.write_bytes, sizes)
        entry["total_value"] = json_count(t.total(write_allocate), sizes)
    return entry


def _intensities(intensities: Mapping[str, Intensity]) -> dict[str, Any]:
    return {model: _intensity(i) for model, i in intensities.items()}


def _intensity(intensity: Intensity) -> dict[str, Any]:
    if not intensity.finite:
        return {"expr": None, "limit": None, "value": None, "decimal": None, "no_traffic": True}
    decimal_source = intensity.value if intensity.value is not None else intensity.expr
    return {
        "expr": expression_text(intensity.expr),
        "limit": expression_text(intensity.limit),
        "value": expression_text(intensity.value),
        "decimal": numeric_value(decimal_source) if decimal_source is not None else None,
        "no_traffic": False,
    }


def _unknown(unknown: Unknown) -> dict[str, Any]:
    return {
        "kind": unknown.kind.value,
        "message": unknown.message,
        "line": unknown.span.line,
        "column": unknown.span.column,
        "symbol": unknown.symbol,
    }


def _diagnostic(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "file": diagnostic.span.file,
        "line": diagnostic.span.line,
        "column": diagnostic.span.column,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
    }
