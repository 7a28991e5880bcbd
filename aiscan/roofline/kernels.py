"""Analysis results to roofline inputs: one `KernelSpec` per loop nest (or function).

The bridge between `aiscan.analysis` and the placement and plots: it picks the traffic
model, the bytes with and without write-allocate, and the precision (the kernel's element
type unless the user overrides it with `--dtype`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from aiscan.analysis.intensity import substitute_sizes
from aiscan.analysis.kernel import FunctionAnalysis, ModuleAnalysis, RegionAnalysis
from aiscan.errors import UsageError
from aiscan.ir.nodes import Node
from aiscan.options import PlacementOptions
from aiscan.roofline.devices import Device
from aiscan.roofline.hierarchy import DeviceCacheTraffic, device_cache_traffic
from aiscan.roofline.placement import Placement, place, place_hierarchical
from aiscan.roofline.plot import KernelSpec

__all__ = [
    "PlacementOptions",
    "cache_traffic_on",
    "kernel_spec",
    "module_kernels",
    "place_on_devices",
]

NO_CACHE_NOTE = "no cache level with a capacity and a line size: placed with compulsory traffic"


def cache_traffic_on(
    result: RegionAnalysis | FunctionAnalysis,
    device: Device,
    options: PlacementOptions,
    sizes: Mapping[str, int],
) -> DeviceCacheTraffic | None:
    """The `cache` model's traffic of a nest (or a function's nests) on one device, with
    the device's store policy unless the user overrides it; None without modelled caches."""
    if isinstance(result, RegionAnalysis):
        bodies: tuple[tuple[Node, ...], ...] = (result.region.body,)
    else:
        bodies = tuple(r.region.body for r in result.regions)
    write_allocate = (
        device.write_allocate if options.write_allocate is None else options.write_allocate
    )
    return _cache_traffic(bodies, device, write_allocate, tuple(sorted(sizes.items())))


@lru_cache(maxsize=1024)
def _cache_traffic(
    bodies: tuple[tuple[Node, ...], ...],
    device: Device,
    write_allocate: bool,
    size_items: tuple[tuple[str, int], ...],
) -> DeviceCacheTraffic | None:
    """Memoized: the JSON's `cache_traffic` and the placement ask for the same traffic."""
    return device_cache_traffic(
        bodies, device, write_allocate=write_allocate, sizes=dict(size_items)
    )


def kernel_spec(
    label: str, result: RegionAnalysis | FunctionAnalysis, options: PlacementOptions
) -> KernelSpec:
    traffic = result.traffic.get(options.model, result.traffic["compulsory"])
    return KernelSpec(
        label=label,
        flops=result.flops.total,
        bytes_moved=traffic.total(False),
        precision=options.dtype or result.precision or "fp64",
        bytes_write_allocate=traffic.total(True),
        write_allocate=options.write_allocate,
    )


def place_on_devices(
    spec: KernelSpec,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    result: RegionAnalysis | FunctionAnalysis | None = None,
) -> list[Placement | str]:
    """The kernel on each device, or the reason it cannot be placed there. The `cache`
    model needs the analysis `result` (its loop nests); without modelled caches on a
    device it falls back to compulsory traffic, with a note."""
    placed: list[Placement | str] = []
    for device in options.devices:
        try:
            if options.model == "cache" and result is not None:
                traffic = cache_traffic_on(result, device, options, sizes)
                if traffic is not None:
                    placed.append(
                        place_hierarchical(
                            spec.flops,
                            traffic,
                            spec.precision,
                            device,
                            sizes=sizes,
                            sparse=options.sparse,
                        )
                    )
                    continue
                fallback = place(
                    spec.flops,
                    spec.bytes_on(device),
                    spec.precision,
                    device,
                    sizes=sizes,
                    sparse=options.sparse,
                )
                placed.append(replace(fallback, notes=(*fallback.notes, NO_CACHE_NOTE)))
                continue
            plain = place(
                spec.flops,
                spec.bytes_on(device),
                spec.precision,
                device,
                sizes=sizes,
                sparse=options.sparse,
            )
            model = options.model if options.model in ("compulsory", "streaming") else "compulsory"
            placed.append(replace(plain, model=model))
        except UsageError as error:
            placed.append(f"{device.key}: {error}")
    return placed


def module_kernels(
    analyses: Sequence[ModuleAnalysis], options: PlacementOptions
) -> list[KernelSpec]:
    """Every loop nest with FLOPs, labelled `function:line` (with the file when several),
    its counts evaluated at the module's sizes (`#define` defaults, `-D`, `--size`), as
    `analyze` evaluates them; symbols without a size stay and are drawn as a path."""
    several = len(analyses) > 1
    specs = []
    for analysis in analyses:
        stem = analysis.module.path.rsplit("/", 1)[-1]
        for function in analysis.functions:
            for region in function.regions:
                if region.region.kind != "nest" or region.flops.total == 0:
                    continue
                label = f"{function.function.name}:{region.region.span.line}"
                spec = kernel_spec(f"{stem}:{label}" if several else label, region, options)
                specs.append(_at_sizes(spec, analysis.sizes))
    return specs


def _at_sizes(spec: KernelSpec, sizes: Mapping[str, int]) -> KernelSpec:
    if not sizes:
        return spec
    allocate = spec.bytes_write_allocate
    return replace(
        spec,
        flops=substitute_sizes(spec.flops, sizes),
        bytes_moved=substitute_sizes(spec.bytes_moved, sizes),
        bytes_write_allocate=None if allocate is None else substitute_sizes(allocate, sizes),
    )
