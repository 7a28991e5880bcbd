"""A device's caches as the `cache` traffic model sees them, and that model's traffic
for a loop nest (or a function: its nests added, each starting cold).

Capacities: a level's `capacity_bytes` is the device total; one thread's share of it is
one instance of the level over the threads that share that instance, or, with the threads
unknown, the total over the device's `cores` (docs/model.md, "Multicore"). A level without a
capacity or a line size cannot be modelled and is left out, with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, expand
from aiscan.analysis.cache_model import CacheLevelSpec, LevelTraffic, WholeCache, cache_traffic
from aiscan.ir.nodes import Node
from aiscan.roofline.devices import MEMORY_LEVELS, Device

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["DeviceCacheTraffic", "cache_specs", "device_cache_traffic"]

_RANK = {level: rank for rank, level in enumerate(reversed(MEMORY_LEVELS))}
"""l1 first, then l2, l3, llc, main memory: the core outwards."""


@dataclass(frozen=True, slots=True)
class DeviceCacheTraffic:
    """The `cache` model's traffic of one kernel on one device, levels from the core out."""

    device: str
    levels: tuple[LevelTraffic, ...]
    notes: tuple[str, ...]


def cache_specs(device: Device) -> tuple[tuple[CacheLevelSpec, ...], tuple[str, ...]]:
    """The device's modelled caches, innermost first, and notes on the ones left out."""
    caches = sorted(
        (m for m in device.memory if not m.is_main_memory), key=lambda m: _RANK[m.level]
    )
    specs, notes = [], []
    for level in caches:
        if level.capacity_bytes is None or level.line_bytes is None:
            missing = "capacity" if level.capacity_bytes is None else "line size"
            notes.append(f"{level.name}: no {missing} in {device.path.name}; not modelled")
            continue
        share = _share(level.capacity_bytes, level.shared_by_cores, device)
        if device.cache_safety_factor is None:
            specs.append(CacheLevelSpec(level.name, share, level.line_bytes))
        else:
            specs.append(
                CacheLevelSpec(level.name, share, level.line_bytes, device.cache_safety_factor)
            )
    return tuple(specs), tuple(notes)


def _share(capacity: float, shared_by: int | None, device: Device) -> float:
    """One thread's share of a level: with the threads known (`Device.threads`), spread
    evenly over the level's instances, each instance shared by the threads on it (one
    thread has a whole shared cache to itself); otherwise the total over the cores."""
    if device.threads is None or shared_by is None:
        return capacity / device.cores
    instances = max(device.cores // shared_by, 1)
    on_each = -(-device.threads // instances)
    return capacity / instances / max(min(on_each, shared_by), 1)


def device_cache_traffic(
    bodies: Sequence[tuple[Node, ...]],
    device: Device,
    *,
    write_allocate: bool,
    sizes: Mapping[str, int] | None,
    whole_cache: bool = True,
) -> DeviceCacheTraffic | None:
    """The kernel's traffic per level; None when the device has no modelled cache.
    `whole_cache`: as `cache_traffic` takes it."""
    specs, notes = cache_specs(device)
    if not specs:
        return None
    main = device.main_memory.name
    per_body = [
        cache_traffic(
            body, specs, main, write_allocate=write_allocate, sizes=sizes, whole_cache=whole_cache
        )
        for body in bodies
    ]
    if len(per_body) == 1:
        return DeviceCacheTraffic(device.key, per_body[0], notes)
    return DeviceCacheTraffic(device.key, _added(per_body), notes)


def _added(parts: Sequence[tuple[LevelTraffic, ...]]) -> tuple[LevelTraffic, ...]:
    """Level by level sums: each region starts cold (MODEL.md), so regions add up."""
    levels = []
    for same_level in zip(*parts, strict=True):
        first = same_level[0]
        undecided = tuple(u for p in same_level for u in p.undecided)
        lower_read = lower_write = None
        if undecided:
            lower_read = expand(
                sum((p.read if p.read_lower is None else p.read_lower for p in same_level), 0)
            )
            lower_write = expand(
                sum((p.write if p.write_lower is None else p.write_lower for p in same_level), 0)
            )
        levels.append(
            LevelTraffic(
                first.level,
                expand(sum((p.read for p in same_level), ZERO)),
                expand(sum((p.write for p in same_level), ZERO)),
                all(p.exact for p in same_level),
                tuple(c for p in same_level for c in p.conditions),
                undecided,
                lower_read,
                lower_write,
                _whole_cache_added(same_level),
            )
        )
    return tuple(levels)


def _whole_cache_added(same_level: Sequence[LevelTraffic]) -> WholeCache | None:
    """The regions' bytes at the whole cache where some region has a range: the others'
    bytes are the same at either end."""
    ranged = [p.whole_cache for p in same_level if p.whole_cache is not None]
    if not ranged:
        return None
    ends = [p.whole_cache or p for p in same_level]
    return WholeCache(
        expand(sum((e.read for e in ends), ZERO)),
        expand(sum((e.write for e in ends), ZERO)),
        tuple(c for w in ranged for c in w.conditions),
        ranged[0].safety_factor,
    )
