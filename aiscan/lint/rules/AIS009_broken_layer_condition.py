"""AIS009 broken-layer-condition: a reuse a cache loses at the given sizes; a block keeps it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.analysis.cache_model import BrokenReuse, broken_reuses
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule
from aiscan.roofline.devices import Device
from aiscan.roofline.hierarchy import cache_specs
from aiscan.roofline.units import format_binary, format_bytes, format_si

__all__ = ["BrokenLayerCondition"]


class BrokenLayerCondition(Rule):
    """## What it does
    Flags a loop whose reuse a cache of a target device loses at the given sizes: one
    iteration of the loop touches more than half the cache (the layer condition of the
    `cache` traffic model, docs/model.md), so data the next iterations use again is evicted
    and fetched again. The message names the cache, the bytes one iteration touches, the
    extra traffic, and the loop to block (the next loop inside) with the largest block
    that fits. Needs a target device with cache geometry and sizes (`--size`, `-D`, or
    `#define`s); reported once per loop, for the outermost cache that loses the reuse.

    ## Why is this bad?
    A lost reuse multiplies the traffic from the next level: a naive `i, j, k` dgemm at
    n = 4096 reads B from memory once per row of C (8n³ bytes instead of 8n²), which makes
    it memory-bound at about 0.25 FLOP/byte on any CPU.

    ## Example
    ```c
    for (i = 0; i < n; i++)            // one iteration touches all of B
        for (j = 0; j < n; j++)
            for (k = 0; k < n; k++)
                C[i*n + j] += A[i*n + k] * B[k*n + j];
    ```
    Use instead: tile the `j` loop (`for jj ...; for i ...; for j in jj .. jj+b`) with the
    block `b` the message gives, so that one iteration of `i` touches `b` columns of B.

    ## Options
    - `min-lost-fraction` (default 0.1): report only when the lost reuse adds at least this
      fraction to the traffic the cache would move if the condition held.

    ## References
    - H. Stengel, J. Treibig, G. Hager, G. Wellein, "Quantifying performance bottlenecks
      of stencil computations using the Execution-Cache-Memory model", ICS 2015 (layer
      conditions).
    - M. S. Lam, E. E. Rothberg, M. E. Wolf, "The cache performance and optimizations of
      blocked algorithms", ASPLOS 1991.
    """

    code = "AIS009"
    name = "broken-layer-condition"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"min-lost-fraction": 0.1}
    needs_devices = True

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        if not context.sizes:
            return
        for _, region in context.nests():
            if region.unknowns or region.region.gpu_launch:
                continue  # a launch's grid runs in parallel: AIS014 models its L2
            for device in context.devices:
                yield from self._device(context, region.region.body, device, options)

    def _device(
        self,
        context: LintContext,
        body: tuple,  # type: ignore[type-arg]
        device: Device,
        options: Mapping[str, float],
    ) -> Iterator[Finding]:
        specs, _ = cache_specs(device)
        reported: set[int] = set()
        for spec in reversed(specs):  # the outermost cache first: its misses go to memory
            broken = broken_reuses(
                body,
                spec,
                write_allocate=context.write_allocate_on(device),
                sizes=context.sizes,
            )
            for reuse in broken:
                if id(reuse.loop) in reported:
                    continue
                if reuse.lost_bytes < options["min-lost-fraction"] * reuse.fitted_bytes:
                    continue
                reported.add(id(reuse.loop))
                yield self._finding(reuse, device)

    def _finding(self, reuse: BrokenReuse, device: Device) -> Finding:
        loop = reuse.loop
        message = (
            f"loop {loop.var} (line {loop.span.line}) loses its reuse in {reuse.cache} of "
            f"{device.key} at the given sizes: one iteration touches "
            f"{format_binary(reuse.working_set_bytes)}, over the "
            f"{format_bytes(reuse.capacity_bytes)} that fit (half a core's share of the "
            f"cache), which costs {format_si(reuse.lost_bytes, 'B')} more traffic"
        )
        inner = reuse.block_loop
        if inner is not None and reuse.block_size is not None:
            message += (
                f"; block loop {inner.var} (line {inner.span.line}) by {reuse.block_size} "
                "iterations to fit"
            )
        elif inner is not None:
            message += f"; no block of loop {inner.var} (line {inner.span.line}) alone fits"
        return self.finding(
            loop.span,
            message,
            (
                ("device", device.key),
                ("cache", reuse.cache),
                ("working set", format_binary(reuse.working_set_bytes)),
                ("half the cache share", format_bytes(reuse.capacity_bytes)),
                ("extra traffic", format_si(reuse.lost_bytes, "B")),
                ("block", "none fits" if reuse.block_size is None else str(reuse.block_size)),
            ),
        )
