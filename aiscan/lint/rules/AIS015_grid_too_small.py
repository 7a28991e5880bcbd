"""AIS015 grid-too-small: a CUDA launch has fewer blocks than the device has SMs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.algebra import to_sympy
from aiscan.analysis.intensity import substitute_sizes
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["GridTooSmall"]


class GridTooSmall(Rule):
    """## What it does
    Flags a CUDA launch whose grid has fewer blocks than `blocks-per-sm` times the number
    of streaming multiprocessors of a target GPU (`cores` in its device file: 132 on an
    H100 SXM). Needs a target device and a grid known as a number (a launch of constants,
    or one whose sizes are given); silent where the grid is still symbolic.

    ## Why is this bad?
    A block runs on one SM: a grid of 64 blocks on a 132-SM GPU leaves 68 SMs idle for
    the whole launch, so neither the bandwidth nor the peak the roofline places it
    against can be reached. A grid-stride loop covers its range with any grid, which
    makes a small fixed grid easy to write and hard to notice.

    ## Example
    ```cuda
    saxpy<<<64, 256>>>(n, a, x, y);   // 64 blocks, 132 SMs
    ```
    Use instead a grid sized from the data (`(n + 255) / 256`) or from the device (a
    multiple of its SM count, read with `cudaGetDeviceProperties`).

    ## Options
    - `blocks-per-sm` (default 1): report when blocks < this times the SM count.

    ## References
    - NVIDIA, CUDA C++ Best Practices Guide, "Execution Configuration Optimizations":
      the number of blocks should be larger than the number of multiprocessors.
    - docs/cuda.md: launches.
    """

    code = "AIS015"
    name = "grid-too-small"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"blocks-per-sm": 1.0}
    needs_devices = True

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[tuple[int, int, str, str]] = set()
        for function, region in context.nests():
            launch = region.region.launch
            if launch is None or launch.origin == "no launch":
                continue
            blocks = _blocks(launch.grid, context.sizes)
            if blocks is None:
                continue
            for device in context.devices:
                wanted = options["blocks-per-sm"] * device.cores
                span = function.function.span
                key = (span.line, span.column, launch.origin, device.key)
                if device.kind != "gpu" or blocks >= wanted or key in seen:
                    continue
                seen.add(key)
                idle = max(device.cores - blocks, 0)
                yield self.finding(
                    span,
                    f"`{launch.kernel}` ({launch.origin}): a grid of {blocks} "
                    f"block{'' if blocks == 1 else 's'} on {device.key}'s {device.cores} SMs"
                    + (f" leaves {idle} of them idle" if idle else f", under {wanted:g} wanted")
                    + ": size the grid from the data or from the SM count",
                    (
                        ("device", device.key),
                        ("blocks", str(blocks)),
                        ("SMs", str(device.cores)),
                    ),
                )


def _blocks(grid: tuple[object, ...], sizes: Mapping[str, int]) -> int | None:
    """The grid's block count as a number, None where a symbol remains."""
    total = 1
    for axis in grid:
        value = to_sympy(axis)
        if value.free_symbols:
            value = substitute_sizes(value, sizes)
            if value.free_symbols:
                return None
        if not value.is_Integer:
            return None
        total *= int(value)
    return total
