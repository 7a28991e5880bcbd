"""AIS014 l2-tile-spill: a GPU launch re-reads tiles that the L2 cannot hold between uses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.algebra import to_sympy
from aiscan.analysis.cache_model import LayerCondition
from aiscan.analysis.gpu_dram import dram_traffic, l2_spec
from aiscan.analysis.intensity import substitute_sizes
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule
from aiscan.roofline.devices import Device
from aiscan.roofline.units import format_binary, format_bytes, format_si
from aiscan.span import Span

__all__ = ["L2TileSpill"]


class L2TileSpill(Rule):
    """## What it does
    Flags a GPU launch (Triton or CUDA) whose re-reads of the same tiles do not fit in
    the target GPU's L2 at the given sizes, so they come from main memory again: the L2
    model of `analyze` (layer conditions on the grid, programs or blocks in the order the
    GPU starts them, one at a time, half the L2 usable) loses a reuse. The message names
    the loop whose reuse is lost (for a grid axis, the programs that share the tiles),
    the L2 it needs, and the main-memory bytes against the compulsory ones.

    ## Why is this bad?
    A tiled matmul reads each A tile once per column of output tiles. In launch order
    (`pid_0` fastest) one column of programs reads all of A; when A does not fit in the
    L2, every column reads it from HBM again. The fp16 matmul at M = N = K = 4096 with
    64 x 64 tiles then moves, programs one at a time, 2.2 GB instead of 101 MB, and the
    grouped ordering 604 MB. Programs that run at once share some of these re-reads, so
    the figure is what the order costs, not a measurement: placement keeps the
    compulsory bytes for it.

    ## Example
    ```python
    pid_m = tl.program_id(0)      # consecutive programs walk down a column of C
    pid_n = tl.program_id(1)
    ```
    Use instead grouped program ids, so that consecutive programs share rows of A and
    columns of B:
    ```python
    pid = tl.program_id(0)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows
    pid_n = (pid % (GROUP_M * tiles_n)) // rows
    ```

    ## Options
    - `min-extra-fraction` (default 0.1): flag when main memory moves at least this share
      more than the compulsory bytes.

    ## References
    - Triton tutorial "Matrix Multiplication", section "L2 Cache Optimizations".
    - docs/triton.md, "Main memory with the L2"; docs/model.md, "GPU memory".
    """

    code = "AIS014"
    name = "l2-tile-spill"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"min-extra-fraction": 0.1}
    needs_devices = True

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        if not context.sizes:
            return
        for function, region in context.nests():
            if not region.region.gpu_launch or region.unknowns:
                continue
            compulsory = to_sympy(
                substitute_sizes(region.traffic["compulsory"].total(False), context.sizes)
            )
            if not compulsory.is_Integer or compulsory <= 0:
                continue
            for device in context.devices:
                level = next((m for m in device.memory if m.level == "l2"), None)
                if device.kind != "gpu" or level is None or not level.capacity_bytes:
                    continue
                spec = l2_spec(level.capacity_bytes, device.cache_safety_factor)
                traffic = dram_traffic(region.region, spec, device.main_memory.name, context.sizes)
                if traffic is None or not traffic.exact:
                    continue
                moved = to_sympy(traffic.total)
                lost = [c for c in traffic.conditions if not c.holds]
                if not lost or moved < (1 + options["min-extra-fraction"]) * compulsory:
                    continue
                yield self._finding(
                    region.region.span,
                    function.function.name,
                    lost[0],
                    device,
                    int(moved),
                    int(compulsory),
                )

    def _finding(
        self,
        span: Span,
        name: str,
        condition: LayerCondition,
        device: Device,
        moved: int,
        compulsory: int,
    ) -> Finding:
        needed = format_binary(float(condition.working_set))
        capacity = format_bytes(condition.capacity_bytes)
        ratio = f"{moved / compulsory:.3g}"
        message = (
            f"{name}: the re-reads across {condition.loop_var} (line {condition.line}) need "
            f"{needed} of {device.key}'s L2, over the {capacity} the model counts on (half), "
            f"and come from {device.main_memory.name} again: {format_si(moved, 'B')} with "
            f"programs one at a time, {ratio}x the compulsory {format_si(compulsory, 'B')}; "
            "an order in which consecutive programs share tiles (grouped program ids) or "
            "larger tiles re-read less"
        )
        return self.finding(
            Span(span.file, condition.line, 1),
            message,
            (
                ("device", device.key),
                ("loop", condition.loop_var),
                ("L2 needed", needed),
                ("main-memory bytes", str(moved)),
                ("compulsory bytes", str(compulsory)),
            ),
        )
