"""Analysis results to roofline inputs: one `KernelSpec` per loop nest (or function).

The bridge between `aiscan.analysis` and the placement and plots: it picks the traffic
model, the bytes with and without write-allocate, and the precision (the kernel's element
type unless the user overrides it with `--dtype`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from aiscan.analysis.intensity import substitute_sizes
from aiscan.analysis.kernel import FunctionAnalysis, ModuleAnalysis, RegionAnalysis
from aiscan.errors import UsageError
from aiscan.options import PlacementOptions
from aiscan.roofline.placement import Placement, place
from aiscan.roofline.plot import KernelSpec

__all__ = ["PlacementOptions", "kernel_spec", "module_kernels", "place_on_devices"]


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
    spec: KernelSpec, options: PlacementOptions, sizes: Mapping[str, int]
) -> list[Placement | str]:
    """The kernel on each device, or the reason it cannot be placed there."""
    placed: list[Placement | str] = []
    for device in options.devices:
        try:
            placed.append(
                place(
                    spec.flops,
                    spec.bytes_on(device),
                    spec.precision,
                    device,
                    sizes=sizes,
                    sparse=options.sparse,
                )
            )
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
