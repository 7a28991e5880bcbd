"""A GPU launch's main-memory bytes on one device: the GPU memory model
(`analysis.gpu_memory`) with the device's L2, at the given sizes, for placement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, expand
from aiscan.analysis.cache_model import LevelTraffic
from aiscan.analysis.gpu_dram import dram_traffic, l2_spec
from aiscan.ir.nodes import Region
from aiscan.roofline.devices import Device

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["LaunchMemory", "launch_memory"]


@dataclass(frozen=True, slots=True)
class LaunchMemory:
    """Main-memory bytes of a launch (its regions added) with the device's L2, and why."""

    bytes_moved: sympy.Expr
    note: str


def launch_memory(
    regions: Sequence[Region], device: Device, sizes: Mapping[str, int]
) -> LaunchMemory | None:
    """None where the model cannot say: no L2 capacity in the device file, sizes that do
    not bind the launch, a reuse the layer conditions cannot decide, or a Triton launch's
    re-reads lost between its programs (the placement then keeps the compulsory bytes)."""
    level = next((m for m in device.memory if m.level == "l2" and m.capacity_bytes), None)
    if level is None or level.capacity_bytes is None or device.kind != "gpu":
        return None
    spec = l2_spec(level.capacity_bytes, device.cache_safety_factor)
    found: list[LevelTraffic] = []
    for region in regions:
        traffic = dram_traffic(region, spec, device.main_memory.name, sizes)
        if traffic is None or not traffic.exact or _lost_across_programs(region, traffic):
            return None
        found.append(traffic)
    if not found:
        return None
    total = expand(sum((t.total for t in found), ZERO))
    lost = [c for t in found for c in t.conditions if not c.holds]
    megabytes = f"{level.capacity_bytes / 1e6:g} MB"
    if lost:
        first = lost[0]
        reason = (
            f"the reuse across {first.loop_var} (line {first.line}) needs "
            f"{_megabytes(first.working_set)} of {level.name}, over the half of its {megabytes} "
            "the model counts on, and is lost"
        )
    else:
        reason = f"every re-read fits in half of {level.name}'s {megabytes}"
    note = (
        "GPU launch: main memory is the compulsory bytes plus the re-reads the L2 cannot hold "
        f"at these sizes ({reason}; layer conditions on the grid, blocks in launch order)"
    )
    return LaunchMemory(total, note)


def _lost_across_programs(region: Region, traffic: LevelTraffic) -> bool:
    """A Triton launch whose lost re-reads are between its programs (a grid loop): the
    model runs programs one at a time, but the GPU runs a wave of them at once and they
    share those re-reads, so the figure is no lower bound and placement keeps the
    compulsory bytes (AIS014 names the spill)."""
    grid = {loop.var for loop in region.launch_order}
    return any(not c.holds and c.loop_var in grid for c in traffic.conditions)


def _megabytes(expr: sympy.Expr) -> str:
    try:
        return f"{float(expr) / 1e6:.3g} MB"
    except TypeError:
        return str(expr)
